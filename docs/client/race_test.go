//go:build race

package client_test

// raceEnabled: the test binary was built with -race, so the eventbridge binary is too, reusing the packages that
// `make test` compiled for the other tests instead of compiling all of them a second time.
const raceEnabled = true

package pattern

import "testing"

// TestBigNumbersCompareExactly: from 2^53 on, where IEEE doubles stop telling integers apart, exact values and
// anything-but numbers compare by their exact decimal value, as Amazon EventBridge compares numbers beyond its
// numeric range by their text; below, and in numeric ranges, numbers compare as doubles.
func TestBigNumbersCompareExactly(t *testing.T) {
	t.Parallel()
	const event = `{"data":{"n":9007199254740993,"m":9007199254740992,"neg":-9007199254740993,"sci":9.007199254740993e15,
		"dec":9007199254740993.0,"small":300.0,"items":[{"id":12345678901234567890},{"id":12345678901234567891}]}}`
	runMatchCases(t, event, []matchCase{
		{"the same integer", `{"data":{"n":[9007199254740993]}}`, true},
		{"its double is another integer", `{"data":{"m":[9007199254740993]}}`, false},
		{"the double's integer does not match the next one", `{"data":{"n":[9007199254740992]}}`, false},
		{"2^53 itself", `{"data":{"m":[9007199254740992]}}`, true},
		{"negative", `{"data":{"neg":[-9007199254740993]}}`, true},
		{"negative, the double", `{"data":{"neg":[-9007199254740992]}}`, false},
		{"the same value in another notation", `{"data":{"sci":[9007199254740993]}}`, true},
		{"with a fraction of zero", `{"data":{"dec":[9.007199254740993E+15]}}`, true},
		{"one of several", `{"data":{"n":[1, 9007199254740992, 9007199254740993]}}`, true},
		{"none of several", `{"data":{"n":[1, 9007199254740992, 9007199254740994]}}`, false},
		{"below 2^53 still by value", `{"data":{"small":[300]}}`, true},
		{"in an array element", `{"data":{"items":{"id":[12345678901234567891]}}}`, true},
		{"in no array element", `{"data":{"items":{"id":[12345678901234567892]}}}`, false},
		{"with another field", `{"data":{"n":[9007199254740993],"small":[300]}}`, true},
		{"with another field, the double", `{"data":{"m":[9007199254740993],"small":[300]}}`, false},
		{"anything-but another integer of the same double", `{"data":{"n":[{"anything-but":9007199254740992}]}}`, true},
		{"anything-but the integer", `{"data":{"n":[{"anything-but":9007199254740993}]}}`, false},
		{"anything-but a list", `{"data":{"m":[{"anything-but":[9007199254740993, 1]}]}}`, true},
		{"numeric = compares doubles", `{"data":{"m":[{"numeric":["=", 9007199254740993]}]}}`, true},
		{"numeric range compares doubles", `{"data":{"n":[{"numeric":[">", 9007199254740992]}]}}`, false},
	})
}

func TestDecimalKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"9007199254740993": "9007199254740993e0", "9.007199254740993e15": "9007199254740993e0",
		"9007199254740993.000": "9007199254740993e0", "90071992547409930e-1": "9007199254740993e0",
		"-9007199254740993": "-9007199254740993e0", "1E+20": "1e20", "100000000000000000000": "1e20",
		"0.000": "0", "1.5e16": "15e15", "12345678901234567890.5": "123456789012345678905e-1",
		"1e9999999999": "1e9999999999",
	} {
		if got := decimalKey(in); got != want {
			t.Errorf("decimalKey(%s) = %s, want %s", in, got, want)
		}
	}
}

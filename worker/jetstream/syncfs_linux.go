package jetstream

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openFileSystem opens dir for syncing its file system: sync flushes every file of it to disk (syncfs(2)), close
// releases dir.
func openFileSystem(dir string) (sync func() error, close func() error, err error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	fd := int(d.Fd())
	sync = func() error {
		if err := unix.Syncfs(fd); err != nil {
			return fmt.Errorf("flushing the file system of %s: %w", dir, err)
		}
		return nil
	}
	return sync, d.Close, nil
}

// Package atomicfile writes a file so that readers see either the old
// file or the whole new one: the exporters' WriteFile helpers use it.
package atomicfile

import (
	"io"
	"os"
	"path/filepath"
)

// Write calls write with a temporary file in path's directory, then syncs
// it, makes it mode 0644 (CreateTemp makes 0600; a trace is an ordinary
// output file) and renames it over path. On any error path is untouched,
// the temporary file is removed and the error returned as it came.
func Write(path string, write func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

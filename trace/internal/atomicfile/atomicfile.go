// Package atomicfile writes a file so that readers see either the old
// file or the whole new one: the exporters' WriteFile helpers use it.
package atomicfile

import (
	"fmt"
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

// Produce is Write for a write function that also returns a result (an
// exporter's Write and its Stats): the result comes back whatever
// happened, write's own error as it came (the exporter prefixed it), and
// an error of the file handling prefixed with pkg.
func Produce[R any](path, pkg string, write func(io.Writer) (R, error)) (R, error) {
	var r R
	var werr error
	err := Write(path, func(w io.Writer) error {
		r, werr = write(w)
		return werr
	})
	switch {
	case werr != nil:
		return r, werr
	case err != nil:
		return r, fmt.Errorf("%s: %w", pkg, err)
	}
	return r, nil
}

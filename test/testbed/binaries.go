package testbed

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// modulePath identifies the repository root: the directory whose go.mod declares it.
const modulePath = "github.com/custody-dev/custody"

var (
	toolsOnce sync.Once
	toolsErr  error
)

// RepoRoot returns the root of the Custody repository that contains the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module "+modulePath+"\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the Custody repository: no go.mod for " + modulePath)
		}
		dir = parent
	}
}

// BinDir returns the directory holding the control-plane binaries, building them with
// hack/tools.sh first when they are missing or older than the pin. KUBEBUILDER_ASSETS, when
// set, names a directory to use instead.
func BinDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	toolsOnce.Do(func() {
		cmd := exec.Command(filepath.Join(root, "hack", "tools.sh"))
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			toolsErr = fmt.Errorf("building the control-plane binaries with hack/tools.sh: %w", err)
		}
	})
	return filepath.Join(root, "bin"), toolsErr
}

package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// hubKubeconfig is a kubeconfig of the hub at server, whose CA is ca, for the user with
// token.
func hubKubeconfig(server string, ca, token []byte, user string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["hub"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: string(token)}
	cfg.Contexts["hub"] = &clientcmdapi.Context{Cluster: "hub", AuthInfo: user}
	cfg.CurrentContext = "hub"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("writing the hub kubeconfig: %w", err)
	}
	return data, nil
}

// manifest is where the member's manifest goes: stdout, or a file that appears whole, and
// only once the hub holds everything it needs.
type manifest struct {
	path string
	// file is a temporary file beside path, renamed to path on commit; nil for stdout.
	file *os.File
	data []byte
}

// createManifest creates the temporary file of the manifest for path, so that a path that
// cannot be written fails before the hub is touched. A dry run prints to stdout.
func createManifest(path string, dryRun bool) (*manifest, error) {
	if path == "-" || path == "" || dryRun {
		return &manifest{}, nil
	}
	file, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return nil, fmt.Errorf("writing the manifest: %w", err)
	}
	return &manifest{path: path, file: file}, nil
}

// stage writes data to the temporary file, or keeps it for stdout.
func (m *manifest) stage(data []byte) error {
	m.data = data
	if m.file == nil {
		return nil
	}
	if _, err := m.file.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", m.file.Name(), err)
	}
	return m.file.Close()
}

// commit prints the manifest to stdout, or renames the file to its path and says so in
// report.
func (m *manifest) commit(stdout, report io.Writer) error {
	if m.file == nil {
		_, err := stdout.Write(m.data)
		return err
	}
	if err := os.Rename(m.file.Name(), m.path); err != nil {
		return fmt.Errorf("writing %s: %w", m.path, err)
	}
	m.file = nil
	fmt.Fprintf(report, "wrote %s: apply it to the member cluster with kubectl apply -f %s\n", m.path, m.path)
	return nil
}

// discard removes the temporary file of a manifest that was not committed.
func (m *manifest) discard() {
	if m.file != nil {
		_ = m.file.Close()
		_ = os.Remove(m.file.Name())
	}
}

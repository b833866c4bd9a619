package app

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// confirm asks question and reads the answer; anything but y or yes is a no, which it returns
// as an error ending in unchanged, the object that no write touched. No input at all is a no:
// a command that cannot ask does not act.
func (o *options) confirm(question, unchanged string) error {
	fmt.Fprintf(o.streams.Out, "%s [y/N] ", question)
	answer := ""
	if o.streams.In != nil {
		answer, _ = bufio.NewReader(o.streams.In).ReadString('\n')
	}
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return fmt.Errorf("not confirmed: %s", unchanged)
	}
	return nil
}

// askFlags are --yes and --dry-run of a command whose writes are not easily taken back: it
// asks before it writes, unless --yes, and with --dry-run it asks nothing and every write is
// a server-side dry run, which the hub checks as it would the write and then drops.
type askFlags struct {
	yes    bool
	dryRun bool
}

// add adds --yes and --dry-run to cmd; dryRun says what the dry run prints.
func (a *askFlags) add(cmd *cobra.Command, dryRun string) {
	fs := cmd.Flags()
	fs.BoolVarP(&a.yes, "yes", "y", false, "Do not ask for confirmation.")
	fs.BoolVar(&a.dryRun, "dry-run", false, dryRun+", and change nothing on the hub")
}

// ask confirms question as o.confirm does, unless --yes or --dry-run.
func (o *options) ask(a askFlags, question, unchanged string) error {
	if a.yes || a.dryRun {
		return nil
	}
	return o.confirm(question, unchanged)
}

// writer is c, or with --dry-run a client of c whose every write is a server-side dry run.
func (a askFlags) writer(c client.Client) client.Client {
	if a.dryRun {
		return client.NewDryRunClient(c)
	}
	return c
}

// suffix ends the line that reports a write, as kubectl marks a dry run.
func (a askFlags) suffix() string {
	if a.dryRun {
		return " (server dry run)"
	}
	return ""
}

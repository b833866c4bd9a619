package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/custody-dev/custody/test/environment"
)

// defaultDir is the state directory when --dir is not given.
const defaultDir = ".custody"

// errUsage is returned for a command line that does not parse, once its usage was printed.
var errUsage = errors.New("usage")

// command is a subcommand that acts on a running custody-dev through its control socket.
type command struct {
	name, args, summary string
	// named is true for a command that takes a name, a member's or a site's; partition for
	// one that takes --partition.
	named, partition bool
	run              func(ctx context.Context, c *controlClient, a commandArgs, out io.Writer) error
}

// commandArgs are what the command line gives a command.
type commandArgs struct {
	name      string
	partition bool
}

var commands = []command{
	{name: "status", summary: "List the members and whether their API server and syncer run", run: printStatuses},
	{name: "stop", args: "MEMBER [--partition]", named: true, partition: true, run: stopMember,
		summary: "Lose a member: stop its syncer and API server (--partition: its syncer only)"},
	{name: "start", args: "MEMBER", named: true, run: startMember,
		summary: "Bring back what stop stopped"},
	{name: "stop-site", args: "SITE", named: true, run: stopSite,
		summary: "Lose a site of a hub across sites (--hub-sites): its members, its etcd member, API server and controller replica at once"},
	{name: "start-site", args: "SITE", named: true, run: startSite,
		summary: "Bring back what stop-site stopped"},
}

// findCommand returns the command called name, or nil.
func findCommand(name string) *command {
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		return nil
	}
	return &commands[i]
}

// usage is the command's synopsis.
func (c *command) usage() string {
	return fmt.Sprintf("custody-dev %s [--dir DIR]", strings.TrimSpace(c.name+" "+c.args))
}

// runCommand parses the command's arguments, flags anywhere among them, and runs it against
// the custody-dev whose state is in --dir.
func runCommand(ctx context.Context, c *command, args []string, out, errOut io.Writer) error {
	fs := flag.NewFlagSet("custody-dev "+c.name, flag.ContinueOnError)
	fs.SetOutput(errOut)
	dir := fs.String("dir", defaultDir, "The state directory of the running custody-dev.")
	var a commandArgs
	if c.partition {
		fs.BoolVar(&a.partition, "partition", false, "Stop only the member's syncer; its API server stays up.")
	}
	fs.Usage = func() {
		fmt.Fprintf(errOut, "Usage: %s\n  %s.\n", c.usage(), c.summary)
		fs.PrintDefaults()
	}
	rest, err := parseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err != nil:
		return errUsage
	case c.named && len(rest) == 1:
		a.name = rest[0]
	case c.named || len(rest) > 0:
		fs.Usage()
		return errUsage
	}
	return c.run(ctx, newControlClient(*dir), a, out)
}

// parseInterspersed parses fs's flags wherever they stand among args, and returns the other
// arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return rest, nil
		}
		rest = append(rest, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func printStatuses(ctx context.Context, c *controlClient, _ commandArgs, out io.Writer) error {
	list, err := c.statuses(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "MEMBER\tLOCATION\tSITE\tSTATE\tAPI SERVER\tSYNCER")
	for _, s := range list {
		site := s.Site
		if site == "" {
			site = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Location, site, state(s), running(s.APIServer), running(s.Syncer))
	}
	return tw.Flush()
}

func stopMember(ctx context.Context, c *controlClient, a commandArgs, out io.Writer) error {
	return printMember(out)(c.stop(ctx, a.name, a.partition))
}

func startMember(ctx context.Context, c *controlClient, a commandArgs, out io.Writer) error {
	return printMember(out)(c.start(ctx, a.name))
}

func stopSite(ctx context.Context, c *controlClient, a commandArgs, out io.Writer) error {
	members, err := c.site(ctx, a.name, "stop")
	return printSite(out, "site "+a.name+" is lost", members, err)
}

func startSite(ctx context.Context, c *controlClient, a commandArgs, out io.Writer) error {
	members, err := c.site(ctx, a.name, "start")
	return printSite(out, "site "+a.name+" is back", members, err)
}

// printSite says what became of a site, and what of each of its members runs; or returns err.
func printSite(out io.Writer, became string, members []environment.MemberStatus, err error) error {
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(out, "%s: its etcd member, API server and controller replica, and %d members\n", became, len(members)); err != nil {
		return err
	}
	for _, m := range members {
		if _, err := fmt.Fprintln(out, describe(m)); err != nil {
			return err
		}
	}
	return nil
}

// printMember returns a function that prints what of a member runs, or returns the error it
// is given.
func printMember(out io.Writer) func(environment.MemberStatus, error) error {
	return func(s environment.MemberStatus, err error) error {
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(out, describe(s))
		return err
	}
}

// state names what of a member runs: Running, Partitioned (its syncer stopped) or Stopped.
func state(s environment.MemberStatus) string {
	switch {
	case s.Syncer && s.APIServer:
		return "Running"
	case s.APIServer:
		return "Partitioned"
	}
	return "Stopped"
}

func running(up bool) string {
	if up {
		return "running"
	}
	return "stopped"
}

// describe says in a line what of a member runs.
func describe(s environment.MemberStatus) string {
	switch state(s) {
	case "Running":
		return s.Name + " runs: its API server and syncer are up"
	case "Partitioned":
		return s.Name + " is partitioned: its syncer is stopped, its API server runs"
	}
	return s.Name + " is stopped: its syncer and API server are down"
}

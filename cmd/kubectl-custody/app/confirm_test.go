package app

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// asking is an options whose stdin holds answer, nil for no stdin, and whose stdout is out.
func asking(answer *string, out *bytes.Buffer) *options {
	var in io.Reader
	if answer != nil {
		in = strings.NewReader(*answer)
	}
	return &options{streams: genericiooptions.IOStreams{In: in, Out: out}}
}

func TestConfirm(t *testing.T) {
	answer := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		answer *string
		yes    bool
	}{
		{"y", answer("y\n"), true},
		{"yes, in capitals and spaced", answer("  YES \n"), true},
		{"y without a newline", answer("y"), true},
		{"n", answer("n\n"), false},
		{"an empty line", answer("\n"), false},
		{"something else", answer("sure\n"), false},
		{"end of input", answer(""), false},
		{"no stdin", nil, false},
	} {
		var out bytes.Buffer
		err := asking(tc.answer, &out).confirm("Do it?", "thing/x is unchanged")
		if out.String() != "Do it? [y/N] " {
			t.Errorf("%s: asked %q", tc.name, out.String())
		}
		if want := map[bool]string{true: "", false: "not confirmed: thing/x is unchanged"}[tc.yes]; errorText(err) != want {
			t.Errorf("%s: error %q, want %q", tc.name, errorText(err), want)
		}
	}
}

func TestAskAsksUnlessYesOrDryRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags askFlags
		asked bool
	}{
		{"neither", askFlags{}, true},
		{"--yes", askFlags{yes: true}, false},
		{"--dry-run", askFlags{dryRun: true}, false},
	} {
		var out bytes.Buffer
		err := asking(nil, &out).ask(tc.flags, "Do it?", "thing/x is unchanged")
		if asked := out.Len() > 0; asked != tc.asked || (err != nil) != tc.asked {
			t.Errorf("%s: printed %q, error %v; want asked %t", tc.name, out.String(), err, tc.asked)
		}
	}
	if (askFlags{dryRun: true}).suffix() != " (server dry run)" || (askFlags{}).suffix() != "" {
		t.Error("only a dry run marks its writes")
	}
}

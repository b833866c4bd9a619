package app

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
)

func TestExplain(t *testing.T) {
	o := &options{host: "https://127.0.0.1:6443"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errors.New(`synctarget "m1" not found`), `synctarget "m1" not found`},
		{
			fmt.Errorf("listing: %w", &url.Error{Op: "Get", URL: "https://127.0.0.1:6443/apis/x", Err: errors.New("dial tcp 127.0.0.1:6443: connect: connection refused")}),
			"cannot reach the hub at https://127.0.0.1:6443: dial tcp 127.0.0.1:6443: connect: connection refused",
		},
		{errors.New("unknown command \"cordn\" for \"kubectl custody\"\n\nDid you mean this?\n\tcordon\n"), `unknown command "cordn" for "kubectl custody" Did you mean this? cordon`},
	} {
		if got := o.explain(tc.err); got != tc.want {
			t.Errorf("explain(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

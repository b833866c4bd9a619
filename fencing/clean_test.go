package fencing

import (
	"maps"
	"slices"
	"testing"
)

func TestUnclean(t *testing.T) {
	classes := map[string]Class{
		"east":     {Provisioner: "east.csi", Domain: "east"},
		"west":     {Provisioner: "west.csi", Domain: "west"},
		"local":    {Provisioner: "local.csi"},
		"far":      {Provisioner: "far.csi", Domain: "far"},
		"stripped": {Provisioner: "east.csi"},
	}
	both := []string{"east", "west"}
	pv := func(class, provisioner, domain string) Held {
		return Held{Name: "PersistentVolume pv", Class: class, Provisioner: provisioner, Domain: domain}
	}
	tests := []struct {
		name    string
		domains []string
		classes map[string]Class
		held    []Held
		// want is, per domain, the held objects' names as reported; every domain listed.
		want map[string][]string
	}{
		{
			name: "nothing held: every domain of the target and of the classes is clean", domains: []string{"east", "north"}, classes: classes,
			want: map[string][]string{"east": nil, "west": nil, "far": nil, "north": nil},
		},
		{
			name: "an object of a class with a domain the target reaches counts there only", domains: both,
			classes: classes, held: []Held{pv("east", "east.csi", "")},
			want: map[string][]string{"east": {"PersistentVolume pv"}, "west": nil, "far": nil},
		},
		{
			name: "a claim naming no provisioner and its own domain, alike its class's", domains: both,
			classes: classes, held: []Held{{Name: "PersistentVolumeClaim ns/c", Class: "west", Domain: "west"}},
			want: map[string][]string{"east": nil, "west": {"PersistentVolumeClaim ns/c"}, "far": nil},
		},
		{
			name: "its class lost its domain annotation: every domain", domains: both, classes: classes, held: []Held{pv("stripped", "east.csi", "")},
			want: everywhere([]string{"east", "west", "far"}, "PersistentVolume pv (its storage class stripped names no storage domain)"),
		},
		{
			name: "an internal class looks the same: every domain", domains: both, classes: classes, held: []Held{pv("local", "local.csi", "")},
			want: everywhere([]string{"east", "west", "far"}, "PersistentVolume pv (its storage class local names no storage domain)"),
		},
		{
			name: "its class is missing: every domain", domains: both, classes: classes, held: []Held{pv("gone", "east.csi", "")},
			want: everywhere([]string{"east", "west", "far"}, "PersistentVolume pv (its storage class gone does not exist)"),
		},
		{
			name: "no class, even with no class in the member: every domain of the target", domains: both, held: []Held{pv("", "", "")},
			want: everywhere(both, "PersistentVolume pv (it names no storage class)"),
		},
		{
			name: "its class is of another provisioner now: every domain", domains: both, classes: classes, held: []Held{pv("west", "east.csi", "")},
			want: everywhere([]string{"east", "west", "far"}, "PersistentVolume pv (its provisioner east.csi is not its storage class west's, west.csi)"),
		},
		{
			name: "its class names a domain the target does not reach: every domain", domains: both, classes: classes, held: []Held{pv("far", "far.csi", "")},
			want: everywhere([]string{"east", "west", "far"}, "PersistentVolume pv (its storage class far names storage domain far, which the target does not reach)"),
		},
		{
			name: "it names a domain its class does not: every domain", domains: both, classes: classes, held: []Held{pv("east", "east.csi", "west")},
			want: everywhere([]string{"east", "west", "far"}, "PersistentVolume pv (it names storage domain west, its storage class east names east)"),
		},
		{
			name: "a target with no domains in its spec: the classes' domains, and nothing is reachable", classes: map[string]Class{"east": classes["east"]},
			held: []Held{pv("east", "east.csi", "")},
			want: everywhere([]string{"east"}, "PersistentVolume pv (its storage class east names storage domain east, which the target does not reach)"),
		},
		{
			name: "names are sorted", domains: []string{"east"}, classes: classes,
			held: []Held{{Name: "b", Class: "east"}, {Name: "a", Class: "east"}},
			want: map[string][]string{"east": {"a", "b"}, "west": nil, "far": nil},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Unclean(tt.domains, tt.classes, tt.held)
			if !maps.EqualFunc(got, tt.want, slices.Equal) {
				t.Fatalf("Unclean = %q, want %q", got, tt.want)
			}
		})
	}
}

// everywhere is a report in which every domain holds the one object name.
func everywhere(domains []string, name string) map[string][]string {
	out := map[string][]string{}
	for _, d := range domains {
		out[d] = []string{name}
	}
	return out
}

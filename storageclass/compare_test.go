package storageclass

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// fast is the class every test starts from: a network class of domain "east".
func fast(mutate ...func(*workloadv1alpha1.StorageClassInfo)) workloadv1alpha1.StorageClassInfo {
	c := workloadv1alpha1.StorageClassInfo{
		Name:                 "fast",
		Provisioner:          "rbd.csi.ceph.com",
		Parameters:           map[string]string{"pool": "ssd", "clusterID": "c1"},
		ReclaimPolicy:        corev1.PersistentVolumeReclaimDelete,
		VolumeBindingMode:    "WaitForFirstConsumer",
		AllowVolumeExpansion: true,
		Domain:               "east",
	}
	for _, m := range mutate {
		m(&c)
	}
	return c
}

func named(name string) func(*workloadv1alpha1.StorageClassInfo) {
	return func(c *workloadv1alpha1.StorageClassInfo) { c.Name = name }
}

func target(name string, classes ...workloadv1alpha1.StorageClassInfo) Target {
	return Target{Name: name, Classes: classes}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name    string
		targets []Target
		want    Report
	}{
		{name: "no targets", want: Report{}},
		{
			name:    "one target has nothing to disagree with",
			targets: []Target{target("t1", fast())},
			want:    Report{Targets: []string{"t1"}, Classes: []string{"fast"}},
		},
		{
			name:    "targets that report nothing agree",
			targets: []Target{target("t1"), target("t2")},
			want:    Report{Targets: []string{"t1", "t2"}},
		},
		{
			name:    "identical classes agree",
			targets: []Target{target("t1", fast(), fast(named("slow"))), target("t2", fast(named("slow")), fast())},
			want:    Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast", "slow"}},
		},
		{
			name: "provisioner",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner = "ebs.csi.aws.com" })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldProvisioner, Values: []Values{{`"rbd.csi.ceph.com"`, []string{"t1"}}, {`"ebs.csi.aws.com"`, []string{"t2"}}}},
			}},
		},
		{
			name: "parameters: a value differs, and only that key is shown",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) {
					c.Parameters = map[string]string{"pool": "hdd", "clusterID": "c1"}
				})),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldParameters, Values: []Values{{`{pool="ssd"}`, []string{"t1"}}, {`{pool="hdd"}`, []string{"t2"}}}},
			}},
		},
		{
			name: "parameters: a key is absent on one target",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Parameters["encrypted"] = "true" })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldParameters, Values: []Values{{`{encrypted unset}`, []string{"t1"}}, {`{encrypted="true"}`, []string{"t2"}}}},
			}},
		},
		{
			name: "parameters: an empty value is not an absent key",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Parameters["encrypted"] = "" })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldParameters, Values: []Values{{`{encrypted unset}`, []string{"t1"}}, {`{encrypted=""}`, []string{"t2"}}}},
			}},
		},
		{
			name: "parameters: no map and an empty map agree",
			targets: []Target{
				target("t1", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Parameters = nil })),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Parameters = map[string]string{} })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}},
		},
		{
			name: "domain, internal against network",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Domain = "" })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldDomain, Values: []Values{{`"east"`, []string{"t1"}}, {`""`, []string{"t2"}}}},
			}},
		},
		{
			name: "reclaim policy",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldReclaimPolicy, Values: []Values{{`"Delete"`, []string{"t1"}}, {`"Retain"`, []string{"t2"}}}},
			}},
		},
		{
			name: "an empty reclaim policy and binding mode are the defaults",
			targets: []Target{
				target("t1", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.ReclaimPolicy, c.VolumeBindingMode = "", "" })),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.VolumeBindingMode = "Immediate" })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}},
		},
		{
			name: "binding mode",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.VolumeBindingMode = "Immediate" })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldVolumeBindingMode, Values: []Values{{`"WaitForFirstConsumer"`, []string{"t1"}}, {`"Immediate"`, []string{"t2"}}}},
			}},
		},
		{
			name: "volume expansion",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.AllowVolumeExpansion = false })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldAllowVolumeExpansion, Values: []Values{{"true", []string{"t1"}}, {"false", []string{"t2"}}}},
			}},
		},
		{
			name: "default class",
			targets: []Target{
				target("t1", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true })),
				target("t2", fast()),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldDefault, Values: []Values{{"true", []string{"t1"}}, {"false", []string{"t2"}}}},
			}, Defaults: []Values{{`"fast"`, []string{"t1"}}, {"none", []string{"t2"}}}},
		},
		{
			name: "default classes of other names",
			targets: []Target{
				target("t1", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true }), fast(named("slow"))),
				target("t2", fast(), fast(named("slow"), func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true })),
				target("t3", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true }), fast(named("slow"))),
			},
			want: Report{Targets: []string{"t1", "t2", "t3"}, Classes: []string{"fast", "slow"}, Mismatches: []Mismatch{
				{Class: "fast", Field: FieldDefault, Values: []Values{{"true", []string{"t1", "t3"}}, {"false", []string{"t2"}}}},
				{Class: "slow", Field: FieldDefault, Values: []Values{{"false", []string{"t1", "t3"}}, {"true", []string{"t2"}}}},
			}, Defaults: []Values{{`"fast"`, []string{"t1", "t3"}}, {`"slow"`, []string{"t2"}}}},
		},
		{
			name: "the same default class everywhere",
			targets: []Target{
				target("t1", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true }), fast(named("slow"))),
				target("t2", fast(named("slow")), fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true })),
			},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast", "slow"}},
		},
		{
			name:    "a class missing on one target",
			targets: []Target{target("t1", fast(), fast(named("gold"))), target("t2", fast()), target("t3", fast(named("gold")), fast())},
			want: Report{Targets: []string{"t1", "t2", "t3"}, Classes: []string{"fast", "gold"}, Missing: []Missing{
				{Class: "gold", MissingOn: []string{"t2"}, PresentOn: []string{"t1", "t3"}},
			}},
		},
		{
			name:    "a target that reports nothing lacks every class",
			targets: []Target{target("t1", fast(), fast(named("gold"))), target("t2")},
			want: Report{Targets: []string{"t1", "t2"}, Classes: []string{"fast", "gold"}, Missing: []Missing{
				{Class: "fast", MissingOn: []string{"t2"}, PresentOn: []string{"t1"}},
				{Class: "gold", MissingOn: []string{"t2"}, PresentOn: []string{"t1"}},
			}},
		},
		{
			name: "a class missing somewhere is still compared where it is",
			targets: []Target{
				target("t1", fast()),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner = "other" })),
				target("t3"),
			},
			want: Report{Targets: []string{"t1", "t2", "t3"}, Classes: []string{"fast"},
				Mismatches: []Mismatch{{Class: "fast", Field: FieldProvisioner, Values: []Values{{`"rbd.csi.ceph.com"`, []string{"t1"}}, {`"other"`, []string{"t2"}}}}},
				Missing:    []Missing{{Class: "fast", MissingOn: []string{"t3"}, PresentOn: []string{"t1", "t2"}}},
			},
		},
		{
			name: "ordering: targets and classes by name, a class's fields refusing first, values by first target",
			targets: []Target{
				target("t3", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner = "b" }), fast(named("alpha"), func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true })),
				target("t1", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner, c.AllowVolumeExpansion = "c", false }), fast(named("alpha"))),
				target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner, c.Parameters["pool"] = "b", "hdd" }), fast(named("alpha"))),
				target("t4", fast(func(c *workloadv1alpha1.StorageClassInfo) { c.Provisioner = "c" }), fast(named("alpha"))),
			},
			want: Report{Targets: []string{"t1", "t2", "t3", "t4"}, Classes: []string{"alpha", "fast"}, Mismatches: []Mismatch{
				{Class: "alpha", Field: FieldDefault, Values: []Values{{"false", []string{"t1", "t2", "t4"}}, {"true", []string{"t3"}}}},
				{Class: "fast", Field: FieldProvisioner, Values: []Values{{`"c"`, []string{"t1", "t4"}}, {`"b"`, []string{"t2", "t3"}}}},
				{Class: "fast", Field: FieldParameters, Values: []Values{{`{pool="ssd"}`, []string{"t1", "t3", "t4"}}, {`{pool="hdd"}`, []string{"t2"}}}},
				{Class: "fast", Field: FieldAllowVolumeExpansion, Values: []Values{{"false", []string{"t1"}}, {"true", []string{"t2", "t3", "t4"}}}},
			}, Defaults: []Values{{"none", []string{"t1", "t2", "t4"}}, {`"alpha"`, []string{"t3"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Compare(tt.targets); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Compare:\n got %+v\nwant %+v", got, tt.want)
			}
			// The report does not depend on the order in which targets and classes come.
			reversed := slices.Clone(tt.targets)
			slices.Reverse(reversed)
			for i := range reversed {
				reversed[i].Classes = slices.Clone(reversed[i].Classes)
				slices.Reverse(reversed[i].Classes)
			}
			if got := Compare(reversed); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Compare of the reversed input:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestReportLines(t *testing.T) {
	r := Compare([]Target{
		target("t1", fast(), fast(named("gold"))),
		target("t2", fast(func(c *workloadv1alpha1.StorageClassInfo) {
			c.Provisioner, c.ReclaimPolicy, c.Parameters["pool"], c.Parameters["fs"] = "other", corev1.PersistentVolumeReclaimRetain, "hdd", "xfs"
		})),
	})
	wantRefusals := []string{
		`class "fast" differs in provisioner: "rbd.csi.ceph.com" on t1; "other" on t2`,
		`class "fast" differs in parameters: {fs unset, pool="ssd"} on t1; {fs="xfs", pool="hdd"} on t2`,
		`class "gold" is missing on t2 (present on t1)`,
	}
	if got := r.Refusals(); !reflect.DeepEqual(got, wantRefusals) {
		t.Errorf("Refusals:\n got %q\nwant %q", got, wantRefusals)
	}
	wantDifferences := []string{`class "fast" differs in reclaimPolicy: "Delete" on t1; "Retain" on t2`}
	if got := r.Differences(); !reflect.DeepEqual(got, wantDifferences) {
		t.Errorf("Differences:\n got %q\nwant %q", got, wantDifferences)
	}
}

func TestRefusesMoves(t *testing.T) {
	want := map[Field]bool{
		FieldProvisioner: true, FieldParameters: true, FieldDomain: true,
		FieldReclaimPolicy: false, FieldVolumeBindingMode: false, FieldAllowVolumeExpansion: false, FieldDefault: false,
		Field("unknown"): false,
	}
	for f, refuses := range want {
		if got := f.RefusesMoves(); got != refuses {
			t.Errorf("%s.RefusesMoves() = %v, want %v", f, got, refuses)
		}
	}
}

func TestDefaultsDiffer(t *testing.T) {
	isDefault := func(c *workloadv1alpha1.StorageClassInfo) { c.Default = true }
	tests := []struct {
		name    string
		targets []Target
		want    string
	}{
		{name: "the same default", targets: []Target{target("t1", fast(isDefault)), target("t2", fast(isDefault))}},
		{name: "no default anywhere", targets: []Target{target("t1", fast()), target("t2", fast())}},
		{
			name:    "a target without one",
			targets: []Target{target("t1", fast(isDefault)), target("t2", fast())},
			want:    `the default class differs: "fast" on t1; none on t2; volumes of claims that name no class do not move between those targets`,
		},
		{
			name:    "other names, and a target with two",
			targets: []Target{target("t1", fast(isDefault)), target("t2", fast(named("slow"), isDefault)), target("t3", fast(named("slow"), isDefault), fast(isDefault))},
			want:    `the default class differs: "fast" on t1; "slow" on t2; "fast", "slow" on t3; volumes of claims that name no class do not move between those targets`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Compare(tt.targets).DefaultsDiffer(); got != tt.want {
				t.Fatalf("DefaultsDiffer:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

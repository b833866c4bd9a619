package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	storagev1alpha1 "github.com/custody-dev/custody/api/storage/v1alpha1"
	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

func (o *options) fenceCommand() *cobra.Command {
	var poweredOff bool
	var a askFlags
	cmd := &cobra.Command{
		Use:   "fence TARGET --powered-off [--yes] [--dry-run]",
		Short: "State that a lost target's member is powered off: cut it off each of its storage domains with a Manual Fence",
		Long: `State that the member of a lost sync target is powered off and cannot reach its storage,
as Kubernetes' out-of-service taint does for a node: one Manual Fence per storage domain of
the target. The volumes it owned then move to other targets without its acknowledgement, so
state it only of a member that is off.

Network fencing needs no command: the hub fences a lost target that has spec.fencing with a
csi-addons NetworkFence by itself. --powered-off is required, and the target must not be
Ready: a member whose syncer heartbeats is not powered off. A domain that has a Fence
already keeps it; a Network Fence's mode cannot change, and kubectl delete fence
TARGET.DOMAIN lifts it.

The hub lifts the Fences once the target is back, Ready, and reports clean in each domain.

The command names the domains it cuts the target off and asks for confirmation, unless
--yes is given; --dry-run prints the Fences it would create, which the hub checks and does
not keep. An unknown target is refused.`,
		Example: `  # Member member-1 was switched off and cannot be network fenced
  kubectl custody fence member-1 --powered-off

  # What it would create, without asking
  kubectl custody fence member-1 --powered-off --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !poweredOff {
				return fmt.Errorf("network fencing is automatic: the hub fences a lost target that has spec.fencing by itself; --powered-off states that the member of %s is powered off and cannot reach its storage", args[0])
			}
			return o.fence(cmd.Context(), args[0], a)
		},
	}
	cmd.Flags().BoolVar(&poweredOff, "powered-off", false, "State that the target's member is powered off and cannot reach its storage.")
	a.add(cmd, "Print the Fences it would create")
	return cmd
}

// fence creates a Manual Fence in each storage domain of target that has no Fence yet, once
// confirmed as a says.
func (o *options) fence(ctx context.Context, target string, a askFlags) error {
	h, err := o.hub()
	if err != nil {
		return err
	}
	t := &workloadv1alpha1.SyncTarget{}
	if err := h.Get(ctx, client.ObjectKey{Name: target}, t); err != nil {
		return notFound(err, "synctarget", target)
	}
	if err := poweredOffRefusal(t); err != nil {
		return err
	}
	fences, err := fencesOf(ctx, h, target)
	if err != nil {
		return err
	}
	byDomain := map[string]*storagev1alpha1.Fence{}
	for i := range fences {
		byDomain[fences[i].Spec.Domain] = &fences[i]
	}
	var steps []step
	for _, d := range t.Spec.StorageDomains {
		steps = append(steps, fenceStep(target, d, byDomain[d]))
	}
	err = o.askSteps(a, target, "created", steps, func(domains string) string {
		return fmt.Sprintf("State that the member of %s is powered off, and cut it off %s? Its volumes there then move to other targets "+
			"without its acknowledgement: say so only of a member that is off.", target, domains)
	})
	if err != nil {
		return err
	}
	w := a.writer(h.Client)
	return o.apply(ctx, target, "created", a.suffix(), steps, func(ctx context.Context, f *storagev1alpha1.Fence) error {
		return w.Create(ctx, f)
	})
}

// poweredOffRefusal says why no one can state that t's member is powered off, nil when one
// can.
func poweredOffRefusal(t *workloadv1alpha1.SyncTarget) error {
	if t.IsReady() {
		return fmt.Errorf("synctarget %q is Ready: its syncer still heartbeats, so its member is not powered off", t.Name)
	}
	if len(t.Spec.StorageDomains) == 0 {
		return fmt.Errorf("synctarget %q has no storage domains: there is no storage to cut it off", t.Name)
	}
	return nil
}

func (o *options) unfenceCommand() *cobra.Command {
	var a askFlags
	cmd := &cobra.Command{
		Use:   "unfence TARGET [--yes] [--dry-run]",
		Short: "Let a fenced target reach its storage domains again, once it is safe",
		Long: `Set spec.state Unfenced on every Fence of a sync target; the hub then lifts each.

A Fence that holds, the storage having confirmed it, is lifted only once the target is Ready
again and its syncer reported clean in the Fence's domain: that it holds nothing there that
the hub no longer gives it. The hub lifts such a Fence by itself. A Fence that a
LocationPair's failover holds (spec.heldBy) is lifted by the pair, once the target reported
clean after the failover. A Fence that does not hold
(Pending, Fencing, or Failed before it ever held), or whose target no longer exists, may be
unfenced at any time.

The command names the domains whose Fences it would lift and asks for confirmation, unless
--yes is given; --dry-run prints what it would unfence, which the hub checks and does not
keep. A target that neither exists nor has a Fence is refused.`,
		Example: `  kubectl custody unfence member-1
  kubectl custody unfence member-1 --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.unfence(cmd.Context(), args[0], a)
		},
	}
	a.add(cmd, "Print the Fences it would unfence")
	return cmd
}

// unfence sets spec.state Unfenced on the Fences of target that may be lifted, once
// confirmed as a says.
func (o *options) unfence(ctx context.Context, target string, a askFlags) error {
	h, err := o.hub()
	if err != nil {
		return err
	}
	t := &workloadv1alpha1.SyncTarget{}
	missing := h.Get(ctx, client.ObjectKey{Name: target}, t)
	switch {
	case apierrors.IsNotFound(missing):
		t = nil // the Fences of a deleted target may be lifted at any time
	case missing != nil:
		return missing
	}
	fences, err := fencesOf(ctx, h, target)
	if err != nil {
		return err
	}
	if len(fences) == 0 {
		if t == nil {
			return notFound(missing, "synctarget", target)
		}
		fmt.Fprintf(o.streams.Out, "synctarget/%s has no Fence: nothing to unfence\n", target)
		return nil
	}
	var steps []step
	for i := range fences {
		steps = append(steps, unfenceStep(&fences[i], t))
	}
	err = o.askSteps(a, target, "unfenced", steps, func(domains string) string {
		return fmt.Sprintf("Unfence %s in %s? Once the hub lifts those Fences, its member can reach that storage again.", target, domains)
	})
	if err != nil {
		return err
	}
	w := a.writer(h.Client)
	return o.apply(ctx, target, "unfenced", a.suffix(), steps, func(ctx context.Context, f *storagev1alpha1.Fence) error {
		// The decision holds only for the Fence as read, and the answer for the question asked.
		patch := client.MergeFromWithOptions(f.DeepCopy(), client.MergeFromWithOptimisticLock{})
		f.Spec.State = storagev1alpha1.Unfenced
		return w.Patch(ctx, f, patch)
	})
}

// fencesOf reads the Fences of target, sorted by domain.
func fencesOf(ctx context.Context, h *hub, target string) ([]storagev1alpha1.Fence, error) {
	list := &storagev1alpha1.FenceList{}
	if err := h.List(ctx, list); err != nil {
		return nil, err
	}
	fences := slices.DeleteFunc(list.Items, func(f storagev1alpha1.Fence) bool { return f.Spec.TargetName != target })
	sortFences(fences)
	return fences, nil
}

// outcome is what fence or unfence does with one Fence.
type outcome int

const (
	// unchanged: nothing to do; the Fence already is as asked, or as good.
	unchanged outcome = iota
	// refused: the Fence is left as it is until something else changes.
	refused
	// toWrite: the command writes the Fence.
	toWrite
)

// step is what fence or unfence does with the Fence of one storage domain, and what it says
// of it.
type step struct {
	// fence is the Fence, the one to create for fence.
	fence   *storagev1alpha1.Fence
	outcome outcome
	// says follows "fence/NAME " on the step's line.
	says string
}

// fenceStep is what fence --powered-off does in domain of target, whose Fence there is f,
// nil when there is none.
func fenceStep(target, domain string, f *storagev1alpha1.Fence) step {
	switch {
	case f == nil:
		f = &storagev1alpha1.Fence{
			ObjectMeta: metav1.ObjectMeta{Name: storagev1alpha1.FenceName(target, domain)},
			Spec:       storagev1alpha1.FenceSpec{TargetName: target, Domain: domain, State: storagev1alpha1.Fenced, Mode: storagev1alpha1.Manual},
		}
		return step{f, toWrite, fmt.Sprintf("created: %s is cut off storage domain %s as powered off", target, domain)}
	case f.Lifting():
		return step{f, refused, fmt.Sprintf("left as it is: it is being lifted (%s); run this again once it is gone", phase(f))}
	case f.Spec.Mode == storagev1alpha1.Manual:
		return step{f, unchanged, fmt.Sprintf("unchanged: it already states that %s is powered off (%s)", target, phase(f))}
	case f.Holds():
		return step{f, unchanged, fmt.Sprintf("left as it is: a Network Fence holds %s off %s (%s)", target, domain, phase(f))}
	}
	return step{f, refused, fmt.Sprintf("left as it is: it is a Network Fence (%s) and its mode cannot change; kubectl delete fence %s lifts it first", phase(f), f.Name)}
}

// unfenceStep is what unfence does with f, whose target is t, nil when it no longer exists.
func unfenceStep(f *storagev1alpha1.Fence, t *workloadv1alpha1.SyncTarget) step {
	const stays = "it stays fenced until its syncer is back and reports that it holds nothing it should not"
	// Only a Fence the storage confirmed keeps a target that still exists off its storage.
	guarded := f.Holds() && t != nil
	switch {
	case f.Lifting():
		return step{f, unchanged, fmt.Sprintf("already unfenced (%s)", phase(f))}
	case guarded && f.Spec.HeldBy != "":
		return step{f, refused, fmt.Sprintf("not unfenced: %s holds it since its failover, and lets go once %s reports clean", f.Spec.HeldBy, t.Name)}
	case guarded && !t.IsReady():
		return step{f, refused, fmt.Sprintf("not unfenced: %s is not Ready: %s", t.Name, stays)}
	case guarded && !t.IsClean(f.Spec.Domain):
		return step{f, refused, fmt.Sprintf("not unfenced: %s has not reported clean in %s: %s", t.Name, f.Spec.Domain, stays)}
	}
	return step{f, toWrite, "unfenced: the hub lifts it"}
}

// phase is f's phase and its reason, as a step's line shows them.
func phase(f *storagev1alpha1.Fence) string {
	s := "phase " + orNone(string(f.Status.Phase))
	if f.Status.Reason != "" {
		s += ", " + f.Status.Reason
	}
	return s
}

// askSteps asks, as a says, before the steps that write a Fence are carried out: question
// gets the storage domains of their Fences. Steps that write nothing ask nothing.
func (o *options) askSteps(a askFlags, target, done string, steps []step, question func(domains string) string) error {
	var domains []string
	for _, s := range steps {
		if s.outcome == toWrite {
			domains = append(domains, s.fence.Spec.Domain)
		}
	}
	if len(domains) == 0 {
		return nil
	}
	return o.ask(a, question(plural(len(domains), "storage domain")+" "+strings.Join(domains, ", ")), noFence(target, done))
}

// noFence says that no Fence of target was written; done is the verb of a write.
func noFence(target, done string) string {
	return fmt.Sprintf("no Fence of %s was %s", target, done)
}

// apply writes the Fences of the steps that need it with write, and prints a line per step,
// each write's ending in suffix. It fails when it wrote no Fence and some step was refused or
// failed; done is the verb of a write.
func (o *options) apply(ctx context.Context, target, done, suffix string, steps []step, write func(context.Context, *storagev1alpha1.Fence) error) error {
	wrote, stuck := false, false
	for _, s := range steps {
		if s.outcome == toWrite {
			if err := write(ctx, s.fence); err != nil {
				s.outcome, s.says = refused, fmt.Sprintf("not %s: %s", done, o.explain(err))
			} else {
				s.says, wrote = s.says+suffix, true
			}
		}
		stuck = stuck || s.outcome == refused
		fmt.Fprintf(o.streams.Out, "fence/%s %s\n", s.fence.Name, s.says)
	}
	if !wrote && stuck {
		return errors.New(noFence(target, done))
	}
	return nil
}

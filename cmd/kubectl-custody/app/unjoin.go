package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// drainPoll is how often unjoin reads what the target still holds.
const drainPoll = time.Second

// unjoinFlags are the argument and flags of unjoin.
type unjoinFlags struct {
	target  string
	timeout time.Duration
	force   bool
	// revoke deletes the target's hub identity before anything else, cutting its syncer off.
	revoke bool
	// askFlags: --force and --revoke ask before anything changes, unless --yes.
	askFlags
}

func (o *options) unjoinCommand() *cobra.Command {
	f := &unjoinFlags{}
	cmd := &cobra.Command{
		Use:   "unjoin TARGET [--revoke] [--timeout 5m] [--force] [--yes] [--dry-run]",
		Short: "Drain a sync target, then remove it and its hub identity",
		Long: `Drain the sync target TARGET and remove it from the hub, the inverse of join.

unjoin sets spec.evict on the SyncTarget, so that every namespace leaves it: the hub moves
its namespaces and their volumes to other targets of their Locations, or takes them off it,
and its syncer deletes its copies in the member and lets go of the hub objects. It waits,
up to --timeout, until no hub object carries the target's state label: namespaces, claims,
PVs and every resource type its syncer reports. Then it deletes the target's hub identity
that join made, the ServiceAccount first, so that every token of it stops authenticating at
once, then its ClusterRoleBinding, Role and RoleBinding (and a legacy token Secret that an
earlier join made), and last the SyncTarget. In the member, kubectl delete -f member.yaml
removes the syncer.

--revoke deletes that identity first, before the eviction, so that a member that is
compromised or lost is cut off at once: the hub's controller takes away the grants of an
identity that is gone, after which the API server refuses each of its requests, and every
token of the ServiceAccount stops authenticating, whatever its expiry, as soon as the API
server's cache of tokens it has authenticated lets go of them (10 seconds by default).
unjoin then goes on as without it, but a revoked syncer can no longer let go of anything:
whatever the target holds, its volumes first, leaves it only after a Fence (kubectl custody
fence) or with --force. --revoke says what it deletes and asks for confirmation first, unless
--yes is given.

If the target still holds objects after --timeout, unjoin removes nothing and fails with
what it holds, its claims first with the phase and reason of their VolumeOwnership; the
target stays evicting. A volume leaves a target only once its syncer lets go of it, or once
a Fence cut the target off its storage: kubectl custody fence TARGET --powered-off states
that a member that is gone is off. With --force unjoin goes on: it deletes the identity,
takes the target's state label, removal request, finalizers annotation and syncer
finalizer off every hub object still on it, as the hub does for a fenced target, deletes
the SyncTarget and lists those objects. The member keeps its copies of them, and the
volumes among them are not fenced: stop their workloads in the member before the volumes
are used elsewhere. --force --timeout=0 does not wait. --force first says what the target
holds and asks for confirmation, before anything changes, unless --yes is given.

--dry-run changes nothing and asks nothing: it reads once what the target holds, and prints
the revocation, the eviction, the deletions and, with --force, the releases that unjoin would
make, each checked by the hub as a server-side dry run.

Run again once the SyncTarget is gone, unjoin deletes what is left of its identity. A target
of which nothing is left, SyncTarget or identity, is refused as not found.`,
		Example: `  # Move everything off member-1, then remove it from the hub
  kubectl custody unjoin member-1
  kubectl --kubeconfig member.kubeconfig delete -f member.yaml

  # member-1 is compromised: cut its syncer off the hub now, then drain what can leave
  kubectl custody unjoin member-1 --revoke

  # member-1 is gone for good and its volumes moved after a Fence: remove it at once
  kubectl custody unjoin member-1 --force --timeout=0

  # What that would remove and release, changing nothing
  kubectl custody unjoin member-1 --force --timeout=0 --dry-run`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.target = args[0]
			return o.unjoin(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "How long to wait for the target to hold nothing; 0 does not wait")
	fs.BoolVar(&f.force, "force", false, "Remove the target even if it still holds objects after --timeout, leaving its copies of them in the member")
	fs.BoolVar(&f.revoke, "revoke", false, "Delete the target's hub identity first, before the eviction, so that every token of its syncer is refused at once")
	f.add(cmd, "Print what unjoin would revoke, evict, delete and release")
	return cmd
}

// unjoin checks the name, connects to the hub and unjoins the target.
func (o *options) unjoin(ctx context.Context, f *unjoinFlags) error {
	if err := validateTargetName(f.target); err != nil {
		return err
	}
	if f.timeout < 0 {
		return fmt.Errorf("--timeout %s is negative", f.timeout)
	}
	c, err := o.discoveringHub()
	if err != nil {
		return err
	}
	return o.unjoinHub(ctx, c, f)
}

// discoveringHub is a client of the hub that, unlike o.hub's, maps any resource type the hub
// serves, asking the hub's discovery about a group when it first meets it: unjoin lists
// whatever types the target's syncer syncs.
func (o *options) discoveringHub() (client.Client, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: scheme})
}

// unjoinRun is one run of unjoin against a hub: c is the hub's client, which with --dry-run
// only pretends to write.
type unjoinRun struct {
	*options
	c client.Client
	f *unjoinFlags
}

// unjoinHub unjoins f.target through c: it evicts the target, waits until it holds nothing
// and removes it. Past f.timeout it refuses, unless f.force.
func (o *options) unjoinHub(ctx context.Context, c client.Client, f *unjoinFlags) error {
	u := &unjoinRun{options: o, c: f.writer(c), f: f}
	t := &workloadv1alpha1.SyncTarget{}
	err := c.Get(ctx, client.ObjectKey{Name: f.target}, t)
	if apierrors.IsNotFound(err) {
		return u.gone(ctx)
	}
	if err != nil {
		return err
	}
	if err := u.confirmForce(ctx, t); err != nil {
		return err
	}
	if err := u.revokeIdentity(ctx); err != nil {
		return err
	}
	if err := u.evict(ctx, t); err != nil {
		return err
	}
	d := drainOf(u.c, t)
	left, err := u.drained(ctx, d)
	if err != nil {
		return err
	}
	if left.count() > 0 && !f.force && !(f.dryRun && f.timeout > 0) {
		return refusalOf(ctx, c, t.Name, f.timeout, left)
	}
	return u.remove(ctx, d, t, left.count() > 0 && f.force)
}

// gone deletes what is left of the identity of the target, whose SyncTarget is gone; a
// target of which nothing is left is not found.
func (u *unjoinRun) gone(ctx context.Context) error {
	n, err := u.removeIdentity(ctx, u.f.target)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("synctarget %q not found", u.f.target)
	}
	fmt.Fprintf(u.streams.Out, "%s not found\n", kindName(&workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: u.f.target}}))
	return nil
}

// confirmForce asks, before a forced or revoking unjoin of t changes anything, whether to go
// on, saying what t holds now; unless --yes or --dry-run. Both flags make one question.
func (u *unjoinRun) confirmForce(ctx context.Context, t *workloadv1alpha1.SyncTarget) error {
	if !(u.f.force || u.f.revoke) || u.f.yes || u.f.dryRun {
		return nil
	}
	var questions []string
	if u.f.revoke {
		questions = append(questions, revokeQuestion(t.Name))
	}
	if u.f.force {
		left, err := drainOf(u.c, t).holdings(ctx)
		if err != nil {
			return err
		}
		questions = append(questions, forceQuestion(t.Name, u.f.timeout, left))
	}
	return u.confirm(strings.Join(questions, " "), "synctarget/"+t.Name+" is unchanged")
}

// revokeQuestion asks whether to revoke the hub identity of target.
func revokeQuestion(target string) string {
	return fmt.Sprintf("Revoke the hub identity of synctarget/%s now? Every token of serviceaccount %s/%s is refused at once, "+
		"so its syncer can no longer let go of anything: its volumes leave it only after a Fence or with --force.",
		target, custodyNamespace, identityName(target))
}

// revokeIdentity deletes the target's hub identity with --revoke, before anything else.
func (u *unjoinRun) revokeIdentity(ctx context.Context) error {
	if !u.f.revoke {
		return nil
	}
	n, err := u.removeIdentity(ctx, u.f.target)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(u.streams.Out, "the hub identity of %s is revoked: the hub refuses its syncer from now on%s\n", u.f.target, u.f.suffix())
	}
	return nil
}

// forceQuestion asks whether to unjoin target by force, when it holds left now and unjoin
// waits for timeout.
func forceQuestion(target string, timeout time.Duration, left holdings) string {
	holds, then := "nothing on the hub", "after "+timeout.String()
	if left.count() > 0 {
		holds = left.summary()
	}
	if timeout == 0 {
		then = "now"
	}
	return fmt.Sprintf("Remove synctarget/%s by force? It holds %s. Whatever it still holds %s is taken off it: its member keeps its copies, "+
		"and the volumes among them are not fenced.", target, holds, then)
}

// evict sets t's spec.evict, so that the hub takes every namespace off it.
func (u *unjoinRun) evict(ctx context.Context, t *workloadv1alpha1.SyncTarget) error {
	if t.Spec.Evict {
		fmt.Fprintf(u.streams.Out, "%s already evicting\n", kindName(t))
		return nil
	}
	if err := u.c.Patch(ctx, t, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"evict":true}}`))); err != nil {
		return fmt.Errorf("evicting %s: %w", kindName(t), err)
	}
	fmt.Fprintf(u.streams.Out, "%s evicting%s\n", kindName(t), u.f.suffix())
	return nil
}

// drained is what d's target holds once unjoin has waited for it to hold nothing. A dry run
// evicted nothing, so it does not wait: it reads what the target holds now, and says how long
// unjoin would wait.
func (u *unjoinRun) drained(ctx context.Context, d drain) (holdings, error) {
	if !u.f.dryRun {
		return u.waitUntilEmpty(ctx, d, u.f.timeout)
	}
	left, err := d.holdings(ctx)
	if err == nil && left.count() > 0 && u.f.timeout > 0 {
		then := "removes it only once they are gone"
		if u.f.force {
			then = "then takes it off what is left"
		}
		fmt.Fprintf(u.streams.Out, "%s holds %s: unjoin waits up to %s for its syncer to let go of them, and %s\n", d.target, left.summary(), u.f.timeout, then)
	}
	return left, err
}

// waitUntilEmpty reads what d's target holds until it holds nothing or timeout has passed,
// saying what it holds whenever that changes (with the time waited, and how many of the
// objects it held at the first read it let go of), and returns what it held last. A timeout of
// 0 reads once. The reads are not bound by the timeout: one cut off would say nothing. A read
// that fails is tried again until the timeout, then its error returned; a target deleted or
// replaced meanwhile ends the wait at once.
func (o *options) waitUntilEmpty(ctx context.Context, d drain, timeout time.Duration) (holdings, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	said, first := "", -1
	for {
		left, err := d.holdings(ctx)
		var changed *targetChangedError
		if err != nil && (errors.As(err, &changed) || !time.Now().Before(deadline)) {
			return nil, err
		}
		if err == nil && first < 0 {
			first = left.count()
		}
		if s := left.summary(); timeout > 0 && s != "" && s != said {
			fmt.Fprintf(o.streams.ErrOut, "[%s] waiting for %s to hold nothing: %s; %d of %d let go\n",
				time.Since(start).Round(time.Second), d.target, s, first-left.count(), first)
			said = s
		}
		if err == nil && (left.count() == 0 || !time.Now().Before(deadline)) {
			return left, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(drainPoll, time.Until(deadline))):
		}
	}
}

// remove deletes t's identity, lets go of what t still holds when it holds anything, and
// deletes t; it warns of what the member keeps.
func (u *unjoinRun) remove(ctx context.Context, d drain, t *workloadv1alpha1.SyncTarget, holds bool) error {
	// What is left, and the target itself, are read before anything goes: a read that fails
	// then leaves the target as it was.
	var left holdings
	var err error
	if holds {
		left, err = d.holdings(ctx)
	} else {
		err = d.unchanged(ctx)
	}
	if err != nil {
		return err
	}
	if _, err := u.removeIdentity(ctx, t.Name); err != nil {
		return err
	}
	var released []metav1.PartialObjectMetadata
	defer func() {
		if w := leftoverWarning(t.Name, released); w != "" {
			fmt.Fprintln(u.streams.ErrOut, w)
		}
	}()
	for _, obj := range left.objects() {
		had, err := d.letGoOf(ctx, obj)
		if err != nil {
			return err
		}
		if had {
			released = append(released, *obj)
			fmt.Fprintf(u.streams.Out, "%s released%s\n", located(obj), u.f.suffix())
		}
	}
	// Only the SyncTarget read: another of the same name is not this run's to delete.
	_, err = u.deleteObject(ctx, t, client.Preconditions{UID: &t.UID})
	return err
}

// removeIdentity deletes the hub identity that join made for target, the ServiceAccount
// first, so that every token of it is refused at once, and returns how many of its objects
// there were.
func (u *unjoinRun) removeIdentity(ctx context.Context, target string) (int, error) {
	n := 0
	for _, obj := range []client.Object{
		serviceAccountOf(target).obj, bindingOf(target).obj, tokenBindingOf(target).obj, tokenRoleOf(target).obj, legacyToken(target),
	} {
		deleted, err := u.deleteObject(ctx, obj)
		if err != nil {
			return n, err
		}
		if deleted {
			n++
		}
	}
	return n, nil
}

// deleteObject deletes obj and says so; it tells whether there was one to delete.
func (u *unjoinRun) deleteObject(ctx context.Context, obj client.Object, opts ...client.DeleteOption) (bool, error) {
	if u.f.dryRun {
		// A dry run's deletion does not say whether there was anything to delete.
		if err := u.c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object)); apierrors.IsNotFound(err) {
			return false, nil
		}
	}
	err := u.c.Delete(ctx, obj, opts...)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("deleting %s: %w", kindName(obj), err)
	}
	fmt.Fprintf(u.streams.Out, "%s deleted%s\n", kindName(obj), u.f.suffix())
	return true, nil
}

package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

const (
	// custodyNamespace is the hub namespace of the syncers' identities, as config/default
	// makes it.
	custodyNamespace = "custody-system"
	// syncerHubRole is the ClusterRole of what a syncer does on the hub (config/rbac).
	syncerHubRole = "custody-syncer-hub"
	// partOf labels what join writes on the hub, as config/default labels its objects.
	partOf = "app.kubernetes.io/part-of"
	// rollbackTimeout bounds the deletions that undo a failed run.
	rollbackTimeout = 30 * time.Second
	// tokenPoll is how often join looks for the token.
	tokenPoll = 250 * time.Millisecond
)

// identityName names the ServiceAccount of target's syncer on the hub and its
// ClusterRoleBinding. The prefix keeps it apart from the identities config/ ships, whatever
// the target's name.
func identityName(target string) string { return "custody-syncer-target-" + target }

// tokenName names the Secret of the token of target's syncer.
func tokenName(target string) string { return identityName(target) + "-token" }

// TokenSecret is the hub Secret of the token of target's syncer, which join makes and the
// hub's token controller fills in; deleting it revokes the token.
func TokenSecret(target string) client.ObjectKey {
	return client.ObjectKey{Namespace: custodyNamespace, Name: tokenName(target)}
}

// desired is an object that join writes on the hub: created when missing, otherwise
// brought in line by mutate, which controllerutil.CreateOrUpdate applies to the object as
// read.
type desired struct {
	obj    client.Object
	mutate controllerutil.MutateFn
}

func (d desired) key() client.ObjectKey { return client.ObjectKeyFromObject(d.obj) }

// syncTargetOf is the SyncTarget of f: its storage domains, its labels and, when f names
// them, its fencing.
func syncTargetOf(f *joinFlags) desired {
	t := &workloadv1alpha1.SyncTarget{ObjectMeta: metav1.ObjectMeta{Name: f.target}}
	labels, _ := parseLabels(f.locationLabels) // validated
	return desired{t, func() error {
		for k, v := range labels {
			metav1.SetMetaDataLabel(&t.ObjectMeta, k, v)
		}
		t.Spec.StorageDomains = f.domains
		if len(f.fencingCIDRs) > 0 {
			t.Spec.Fencing = &workloadv1alpha1.FencingSpec{NodeCIDRs: f.fencingCIDRs, NetworkFenceClassName: f.fenceClass}
		}
		return nil
	}}
}

// serviceAccountOf is the hub identity of target's syncer.
func serviceAccountOf(target string) desired {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: custodyNamespace, Name: identityName(target)}}
	return desired{sa, func() error {
		metav1.SetMetaDataLabel(&sa.ObjectMeta, partOf, "custody")
		return nil
	}}
}

// bindingOf grants the hub identity of target's syncer what a syncer does on the hub.
func bindingOf(target string) desired {
	b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: identityName(target)}}
	return desired{b, func() error {
		metav1.SetMetaDataLabel(&b.ObjectMeta, partOf, "custody")
		b.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: syncerHubRole}
		b.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: custodyNamespace, Name: identityName(target)}}
		return nil
	}}
}

// tokenOf is a token of the hub identity of target's syncer that does not expire, filled in
// by the hub's token controller. Deleting it revokes the token; join then makes a new one.
func tokenOf(target string) desired {
	key := TokenSecret(target)
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	return desired{s, func() error {
		metav1.SetMetaDataLabel(&s.ObjectMeta, partOf, "custody")
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, corev1.ServiceAccountNameKey, identityName(target))
		s.Type = corev1.SecretTypeServiceAccountToken
		return nil
	}}
}

// checkSyncTarget has the hub check the SyncTarget with a server-side dry run of its write.
func checkSyncTarget(ctx context.Context, c client.Client, d desired) error {
	if _, err := controllerutil.CreateOrUpdate(ctx, client.NewDryRunClient(c), d.obj, d.mutate); err != nil {
		return fmt.Errorf("the hub refuses synctarget %s: %w", d.obj.GetName(), err)
	}
	return nil
}

// hubWriter writes join's objects on the hub, says what it did of each, and remembers what
// it created so that a failed run can delete it.
type hubWriter struct {
	c       client.Client
	report  io.Writer
	dryRun  bool
	created []client.Object
}

// newHubWriter is a hubWriter that writes through c, or only pretends to with dryRun.
func newHubWriter(c client.Client, report io.Writer, dryRun bool) *hubWriter {
	if dryRun {
		c = client.NewDryRunClient(c)
	}
	return &hubWriter{c: c, report: report, dryRun: dryRun}
}

// results are the words kubectl apply prints for what it did to an object.
var results = map[controllerutil.OperationResult]string{
	controllerutil.OperationResultCreated: "created",
	controllerutil.OperationResultUpdated: "configured",
	controllerutil.OperationResultNone:    "unchanged",
}

// ensure creates d's object, or brings it in line, and says which.
func (w *hubWriter) ensure(ctx context.Context, d desired) error {
	name := kindName(d.obj)
	res, err := controllerutil.CreateOrUpdate(ctx, w.c, d.obj, d.mutate)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if res == controllerutil.OperationResultCreated && !w.dryRun {
		w.created = append(w.created, d.obj)
	}
	suffix := ""
	if w.dryRun {
		suffix = " (server dry run)"
	}
	fmt.Fprintf(w.report, "%s %s%s\n", name, results[res], suffix)
	return nil
}

// rollback deletes what the run created, the last first, even when ctx is done.
func (w *hubWriter) rollback(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	var errs []error
	for i := len(w.created) - 1; i >= 0; i-- {
		obj := w.created[i]
		if err := w.c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			errs = append(errs, fmt.Errorf("left %s on the hub: %w", kindName(obj), err))
			continue
		}
		fmt.Fprintf(w.report, "%s deleted: rolled back\n", kindName(obj))
	}
	w.created = nil
	return errors.Join(errs...)
}

// kindName names obj as kubectl apply does: kind.group/name, the kind in lower case.
func kindName(obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return obj.GetName()
	}
	return strings.ToLower(gvk.GroupKind().String()) + "/" + obj.GetName()
}

// waitForToken waits until the hub's token controller filled in the token Secret at key,
// and returns it.
func waitForToken(ctx context.Context, c client.Reader, key client.ObjectKey, timeout time.Duration) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	err := wait.PollUntilContextTimeout(ctx, tokenPoll, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, key, s); err != nil && !apierrors.IsNotFound(err) {
			return false, err
		}
		return len(s.Data[corev1.ServiceAccountTokenKey]) > 0, nil
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if wait.Interrupted(err) {
		return nil, fmt.Errorf("secret %s has no token after %s: the hub's token controller (kube-controller-manager's serviceaccount-token-controller) did not fill it in", key, timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("reading secret %s: %w", key, err)
	}
	return s, nil
}

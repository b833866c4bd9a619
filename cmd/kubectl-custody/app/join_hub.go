package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
	"github.com/custody-dev/custody/config"
)

const (
	// custodyNamespace is the hub namespace of the syncers' identities, as config/default
	// makes it.
	custodyNamespace = workloadv1alpha1.SyncerIdentityNamespace
	// syncerHubRole is the ClusterRole of what a syncer does on the hub (config/rbac).
	syncerHubRole = config.SyncerHubRole
	// partOf labels what join writes on the hub, as config/default labels its objects.
	partOf = "app.kubernetes.io/part-of"
	// rollbackTimeout bounds the deletions that undo a failed run.
	rollbackTimeout = 30 * time.Second
	// rootCAConfigMap is the ConfigMap of every namespace that holds the cluster's root CA.
	rootCAConfigMap = "kube-root-ca.crt"
	// MinCredentialTTL is the shortest lifetime of a token that the API server gives.
	MinCredentialTTL = 10 * time.Minute
)

// identityName names the ServiceAccount of target's syncer on the hub and its
// ClusterRoleBinding: the name the admission policy and the controller's grants know it by.
func identityName(target string) string { return workloadv1alpha1.SyncerIdentity(target) }

// tokenName names the Role and RoleBinding that let target's syncer renew its own
// credential, and the legacy token Secret that earlier versions of join made.
func tokenName(target string) string { return identityName(target) + "-token" }

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

// tokenRoleOf lets the hub identity of target's syncer request tokens of itself, and of no
// other ServiceAccount, so that its syncer renews its own credential before it expires, and
// read the hub's identity that a restored hub keeps (workloadv1alpha1.HubIdentityConfigMap),
// and no other ConfigMap of custody-system.
func tokenRoleOf(target string) desired {
	r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: custodyNamespace, Name: tokenName(target)}}
	return desired{r, func() error {
		metav1.SetMetaDataLabel(&r.ObjectMeta, partOf, "custody")
		r.Rules = syncerOwnRules(target)
		return nil
	}}
}

// syncerOwnRules are the rules of tokenRoleOf(target).
func syncerOwnRules(target string) []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"serviceaccounts/token"}, Verbs: []string{"create"},
		ResourceNames: []string{identityName(target)},
	}, {
		APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
		ResourceNames: []string{workloadv1alpha1.HubIdentityConfigMap},
	}}
}

// tokenBindingOf grants tokenRoleOf(target) to the hub identity of target's syncer.
func tokenBindingOf(target string) desired {
	b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: custodyNamespace, Name: tokenName(target)}}
	return desired{b, func() error {
		metav1.SetMetaDataLabel(&b.ObjectMeta, partOf, "custody")
		b.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: tokenName(target)}
		b.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: custodyNamespace, Name: identityName(target)}}
		return nil
	}}
}

// legacyToken is the Secret of a token that never expires, which join made before it
// requested bound, expiring tokens. Deleting it revokes that token.
func legacyToken(target string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: custodyNamespace, Name: tokenName(target)}}
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

// remove deletes obj if it exists and says so, with why. A deletion is not rolled back.
func (w *hubWriter) remove(ctx context.Context, obj client.Object, why string) error {
	// Read first: a dry run's deletion does not say whether there was anything to delete.
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("reading %s: %w", kindName(obj), err)
	}
	err := w.c.Delete(ctx, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s: %w", kindName(obj), err)
	}
	suffix := ""
	if w.dryRun {
		suffix = " (server dry run)"
	}
	fmt.Fprintf(w.report, "%s deleted: %s%s\n", kindName(obj), why, suffix)
	return nil
}

// kindName names obj as kubectl apply does: kind.group/name, the kind in lower case.
func kindName(obj client.Object) string {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil {
		return obj.GetName()
	}
	return strings.ToLower(gvk.GroupKind().String()) + "/" + obj.GetName()
}

// requestToken requests a token of the hub identity of target's syncer, valid for ttl, with
// the TokenRequest API. The token is bound to no object: it stops authenticating when it
// expires or when the ServiceAccount is deleted, whichever comes first.
func requestToken(ctx context.Context, c client.Client, target string, ttl time.Duration) (string, time.Time, error) {
	sa := serviceAccountOf(target).obj
	seconds := int64(ttl / time.Second)
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}
	if err := c.SubResource("token").Create(ctx, sa, tr); err != nil {
		return "", time.Time{}, fmt.Errorf("requesting a token of %s: %w", kindName(sa), err)
	}
	if tr.Status.Token == "" {
		return "", time.Time{}, fmt.Errorf("the hub gave no token of %s", kindName(sa))
	}
	return tr.Status.Token, tr.Status.ExpirationTimestamp.Time, nil
}

// memberCA is the CA that the member's syncer trusts the hub by: the one the plugin trusts it
// by, else the hub's own root CA as kube-controller-manager publishes it in every namespace,
// else none (the system's roots).
func memberCA(ctx context.Context, c client.Reader, ca []byte) ([]byte, error) {
	if len(ca) > 0 {
		return ca, nil
	}
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: custodyNamespace, Name: rootCAConfigMap}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the hub's CA: %w", err)
	}
	return []byte(cm.Data["ca.crt"]), nil
}

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workloadv1alpha1 "github.com/custody-dev/custody/api/workload/v1alpha1"
)

// hubImportFlags are the argument and flags of hub import.
type hubImportFlags struct {
	file           string
	merge          bool
	credentialsDir string
	// join holds what the members' manifests are made with: --hub-server, --syncer-image,
	// --credential-ttl, and the hub's CA.
	join joinFlags
}

// controllerLease is the controller's leader election Lease, as config/manager runs it.
var controllerLease = client.ObjectKey{Namespace: custodyNamespace, Name: "custody-controller"}

// shown is how many of the objects found on a hub that is not empty the refusal names.
const shown = 5

// dynamicHub is a dynamic client of the hub and what the hub serves. Export and import make
// a request per resource type and per object: the client does not pace them (client-go's
// default, 5 a second, would make an export of an idle hub take seconds), the hub's API
// priority and fairness does.
func (o *options) dynamicHub() (dynamic.Interface, catalog, error) {
	cfg, err := o.restConfig()
	if err != nil {
		return nil, nil, err
	}
	cfg.QPS = -1
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	cat, err := discoverCatalog(dc)
	return dyn, cat, err
}

// readHubExport reads and checks the export file at path.
func readHubExport(path string) (*hubExport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	e, err := parseHubExport(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// syncTargets are the names of the export's SyncTargets.
func (e *hubExport) syncTargets() []string {
	var names []string
	for _, o := range e.objects() {
		if o.GroupVersionKind().GroupKind() == workloadv1alpha1.GroupVersion.WithKind("SyncTarget").GroupKind() {
			names = append(names, o.GetName())
		}
	}
	slices.Sort(names)
	return names
}

// hubImport restores the export f.file into the hub, then gives each joined target a new
// credential.
func (o *options) hubImport(ctx context.Context, f *hubImportFlags) error {
	start := time.Now()
	e, err := readHubExport(f.file)
	if err != nil {
		return err
	}
	targets := e.syncTargets()
	if err := f.validate(targets); err != nil {
		return err
	}
	objs, err := restoreOrder(e.objects())
	if err != nil {
		return err
	}
	h, err := o.hub()
	if err != nil {
		return err
	}
	dyn, cat, err := o.dynamicHub()
	if err != nil {
		return err
	}
	if err := o.checkInto(ctx, h, dyn, cat, e.HubIdentity, f.merge); err != nil {
		return err
	}
	if err := o.keepIdentity(ctx, h, e.HubIdentity); err != nil {
		return err
	}
	if err := o.restoreAll(ctx, dyn, cat, objs); err != nil {
		return fmt.Errorf("%w; the hub stays marked as being restored, and no syncer removes anything from its member until an import completes it (run it again with --merge)", err)
	}
	if err := o.markRestoring(ctx, h, ""); err != nil {
		return err
	}
	if err := o.reissue(ctx, h, targets, f); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.Out, "imported %s as hub %s in %s\n", countKinds(objs), e.HubIdentity, time.Since(start).Round(time.Millisecond))
	if len(targets) > 0 {
		fmt.Fprintf(o.streams.Out, "next: apply each manifest of %s to its member and restart its syncer (kubectl -n custody-system rollout restart deployment custody-syncer), then start the controller\n", f.credentialsDir)
	}
	return nil
}

// validate checks the flags, and makes the directory of the credentials, before the hub is
// touched.
func (f *hubImportFlags) validate(targets []string) error {
	if err := checkCredentialTTL(f.join.credentialTTL); err != nil || len(targets) == 0 {
		return err
	}
	if f.credentialsDir == "" {
		return fmt.Errorf("the export holds %d joined targets, whose syncers need a credential of the restored hub: name a directory for their manifests with --credentials-dir", len(targets))
	}
	if err := os.MkdirAll(f.credentialsDir, 0o700); err != nil {
		return fmt.Errorf("making %s: %w", f.credentialsDir, err)
	}
	return nil
}

// checkInto refuses a hub the controller runs on, whatever --merge says: it would act on a
// half-restored hub. Unless merge, it refuses a hub that holds Custody objects too, naming
// what it found.
func (o *options) checkInto(ctx context.Context, h client.Client, dyn dynamic.Interface, cat catalog, id string, merge bool) error {
	lease := &coordinationv1.Lease{}
	if err := h.Get(ctx, controllerLease, lease); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("reading the controller's leader Lease: %w", err)
	} else if err == nil && leaseHeld(lease, time.Now()) {
		return fmt.Errorf("the controller runs on the hub (its leader Lease %s is held by %s): stop it for the import, as it would act on a half-restored hub (kubectl -n custody-system scale deployment custody-controller --replicas 0), and start it once the syncers have their new credentials",
			controllerLease, ptr.Deref(lease.Spec.HolderIdentity, ""))
	}
	if merge {
		return nil
	}
	found, err := custodyObjects(ctx, h, dyn, cat, id)
	if err != nil {
		return err
	}
	return notEmpty(found)
}

// leaseHeld tells whether a leader Lease is held at now.
func leaseHeld(l *coordinationv1.Lease, now time.Time) bool {
	if ptr.Deref(l.Spec.HolderIdentity, "") == "" || l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return false
	}
	return now.Before(l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
}

// custodyObjects names Custody's objects on the hub, a few of each kind: its API objects, PVs,
// placed namespaces, and another hub's identity.
func custodyObjects(ctx context.Context, h client.Client, dyn dynamic.Interface, cat catalog, id string) ([]string, error) {
	var found []string
	custody := 0
	for _, r := range cat.preferred() {
		gr := r.gvr.GroupResource()
		if !isCustodyGroup(gr.Group) && gr.Resource != "persistentvolumes" && gr.Resource != "namespaces" {
			continue
		}
		if isCustodyGroup(gr.Group) {
			custody++
		}
		limit := shown
		if gr.Resource == "namespaces" {
			limit = 0 // placed ones are picked from all
		}
		objs, err := listAll(ctx, dyn, r, limit)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if gr.Resource != "namespaces" || isPlaced(obj) {
				found = append(found, describe(obj))
			}
		}
	}
	if custody == 0 {
		return nil, errNoCustody
	}
	if kept, err := workloadv1alpha1.ReadHubIdentity(ctx, h); err != nil {
		return nil, err
	} else if kept != id && keepsIdentity(ctx, h) {
		found = append(found, fmt.Sprintf("configmap/%s/%s (hub identity %s)", custodyNamespace, workloadv1alpha1.HubIdentityConfigMap, kept))
	}
	return found, nil
}

// keepsIdentity tells whether the hub keeps an identity in its ConfigMap.
func keepsIdentity(ctx context.Context, h client.Reader) bool {
	err := h.Get(ctx, client.ObjectKey{Namespace: custodyNamespace, Name: workloadv1alpha1.HubIdentityConfigMap}, &corev1.ConfigMap{})
	return err == nil
}

// notEmpty refuses an import into a hub that holds the objects found, naming the first few.
func notEmpty(found []string) error {
	if len(found) == 0 {
		return nil
	}
	names := strings.Join(found[:min(shown, len(found))], ", ")
	if len(found) > shown {
		names += fmt.Sprintf(" and %d more", len(found)-shown)
	}
	return fmt.Errorf("the hub is not empty of Custody objects: it holds %s; import restores into a hub with Custody installed and none of its objects (--merge adds what is missing beside them)", names)
}

// keepIdentity writes the identity of the exported hub into the ConfigMap every syncer reads
// it from, before any object, marked as being restored until the import completes
// (workloadv1alpha1.HubRestoringAnnotation): a hub that holds objects placed on a target
// holds its identity, and a syncer that finds an object missing from a hub being restored
// removes nothing for it, as the object may be still to come.
func (o *options) keepIdentity(ctx context.Context, h client.Client, id string) error {
	since := time.Now().UTC().Format(time.RFC3339)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: custodyNamespace, Name: workloadv1alpha1.HubIdentityConfigMap,
			Labels: map[string]string{partOf: "custody"}, Annotations: map[string]string{workloadv1alpha1.HubRestoringAnnotation: since}},
		Data: map[string]string{workloadv1alpha1.HubIdentityKey: id},
	}
	err := h.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		if err := h.Get(ctx, client.ObjectKeyFromObject(cm), cm); err != nil {
			return err
		}
		if kept := cm.Data[workloadv1alpha1.HubIdentityKey]; kept != id {
			return fmt.Errorf("the hub keeps the identity %s of another hub, not %s, the export's", kept, id)
		}
		return o.markRestoring(ctx, h, since)
	}
	if err != nil {
		return fmt.Errorf("writing the hub's identity: %w", err)
	}
	fmt.Fprintf(o.streams.Out, "configmap/%s/%s created: hub identity %s\n", custodyNamespace, cm.Name, id)
	return nil
}

// markRestoring marks the hub's identity as being restored since since, or, when since is "",
// as restored.
func (o *options) markRestoring(ctx context.Context, h client.Client, since string) error {
	var value any // null: the annotation goes
	if since != "" {
		value = since
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{workloadv1alpha1.HubRestoringAnnotation: value}}})
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: custodyNamespace, Name: workloadv1alpha1.HubIdentityConfigMap}}
	if err := h.Patch(ctx, cm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("marking the hub's identity %s: %w", markOf(since), err)
	}
	if since == "" {
		fmt.Fprintf(o.streams.Out, "configmap/%s/%s: the hub's objects are restored, and the syncers may remove what the hub no longer holds\n", custodyNamespace, cm.Name)
	}
	return nil
}

// markOf says the mark markRestoring writes.
func markOf(since string) string {
	if since == "" {
		return "as restored"
	}
	return "as being restored since " + since
}

// restoreAll creates objs in order, each with its status, then deletes again, the last first,
// those that were being deleted when exported, so that their deletion resumes.
func (o *options) restoreAll(ctx context.Context, dyn dynamic.Interface, cat catalog, objs []*unstructured.Unstructured) error {
	uids := map[types.UID]types.UID{}
	for _, obj := range objs {
		if err := o.restore(ctx, dyn, cat, obj, uids); err != nil {
			return err
		}
	}
	for _, obj := range slices.Backward(objs) {
		if obj.GetDeletionTimestamp() == nil {
			continue
		}
		r, _ := cat.of(obj) // restored above
		if err := r.client(dyn, obj.GetNamespace()).Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s again: %w", describe(obj), err)
		}
		fmt.Fprintf(o.streams.Out, "%s deleted again: it was being deleted\n", describe(obj))
	}
	return nil
}

// restore creates obj with its references remapped, records its new uid in uids and writes
// its status. An object that exists is kept as it is, and its uid taken.
func (o *options) restore(ctx context.Context, dyn dynamic.Interface, cat catalog, obj *unstructured.Unstructured, uids map[types.UID]types.UID) error {
	r, err := cat.of(obj)
	if err != nil {
		return err
	}
	c := r.client(dyn, obj.GetNamespace())
	desired := stripForCreate(obj, r.status)
	dropped := remap(desired, uids)
	created, err := c.Create(ctx, desired, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		existing, err := c.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading %s: %w", describe(obj), err)
		}
		uids[obj.GetUID()] = existing.GetUID()
		fmt.Fprintf(o.streams.Out, "%s exists: kept as it is\n", describe(obj))
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", describe(obj), err)
	}
	uids[obj.GetUID()] = created.GetUID()
	if status, ok := obj.Object["status"]; ok && r.status && obj.GroupVersionKind().GroupKind() != namespaceKind {
		// A patch, not an update: the hub's own controllers may have changed the object
		// since its create (the PVC protection's finalizer on a claim), and the status is
		// the import's to write whatever its version.
		patch, err := json.Marshal(map[string]any{"status": status})
		if err != nil {
			return err
		}
		if _, err := c.Patch(ctx, created.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
			return fmt.Errorf("writing the status of %s: %w", describe(obj), err)
		}
	}
	suffix := ""
	if len(dropped) > 0 {
		suffix = " (not restored, so left out: " + strings.Join(dropped, ", ") + ")"
	}
	fmt.Fprintf(o.streams.Out, "%s restored%s\n", describe(obj), suffix)
	return nil
}

// reissue gives each joined target's syncer an identity on the restored hub and a token of
// it, in a manifest for its member in f.credentialsDir, as join does: the tokens the syncers
// hold name their ServiceAccounts' uids on the hub that was exported, which the restored
// hub's ServiceAccounts do not have.
func (o *options) reissue(ctx context.Context, h client.Client, targets []string, f *hubImportFlags) error {
	if len(targets) == 0 {
		return nil
	}
	cfg, err := o.restConfig()
	if err != nil {
		return err
	}
	if f.join.hubCA, err = caOf(cfg); err != nil {
		return err
	}
	f.join.defaultHubServers(o.host)
	w := newHubWriter(h, o.streams.Out, false)
	for _, t := range targets {
		jf := f.join
		jf.target, jf.output = t, filepath.Join(f.credentialsDir, t+".yaml")
		if err := o.writeMember(ctx, w, &jf); err != nil {
			return fmt.Errorf("the credential of %s: %w", t, err)
		}
	}
	return nil
}

// writeMember writes the target's identity on the hub and its member's manifest.
func (o *options) writeMember(ctx context.Context, w *hubWriter, f *joinFlags) error {
	out, err := createManifest(f.output, false)
	if err != nil {
		return err
	}
	defer out.discard()
	manifest, err := identity(ctx, w, f)
	if err != nil {
		return err
	}
	if err := out.stage(manifest); err != nil {
		return err
	}
	return out.commit(o.streams.Out, o.streams.Out)
}

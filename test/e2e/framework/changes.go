package framework

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Patch reads obj from c, changes it with change and writes the change back in one merge
// patch, which touches only what change changed.
func Patch[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) {
	GinkgoHelper()
	patch := read(ctx, c, obj)
	change(obj)
	Expect(c.Patch(ctx, obj, patch)).To(Succeed())
}

// PatchStatus is Patch of obj's status.
func PatchStatus[T client.Object](ctx context.Context, c client.Client, obj T, change func(T)) {
	GinkgoHelper()
	patch := read(ctx, c, obj)
	change(obj)
	Expect(c.Status().Patch(ctx, obj, patch)).To(Succeed())
}

// read reads obj from c and returns a merge patch from what it read.
func read(ctx context.Context, c client.Client, obj client.Object) client.Patch {
	GinkgoHelper()
	Expect(c.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
	return client.MergeFrom(obj.DeepCopyObject().(client.Object))
}

// Update reads obj from c, applies change and writes it back, again on a conflict, as a
// controller would: for the objects the controllers or the syncers write too.
func Update(ctx context.Context, c client.Client, obj client.Object, change func()) {
	GinkgoHelper()
	Eventually(func() error {
		if err := c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return err
		}
		change()
		return c.Update(ctx, obj)
	}).WithContext(ctx).Should(Succeed())
}

// Deleted returns a check, for Eventually, that key no longer exists in c; while it does,
// the check's failure shows what holds it, as read into obj.
func Deleted(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object) func(g Gomega) {
	return func(g Gomega) {
		err := c.Get(ctx, key, obj)
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%T %s still there: deleted %v, finalizers %v, labels %v, annotations %v (err %v)",
			obj, key, obj.GetDeletionTimestamp(), obj.GetFinalizers(), obj.GetLabels(), obj.GetAnnotations(), err)
	}
}

// Gone waits until obj is deleted from c.
func Gone(ctx context.Context, c client.Client, obj client.Object) {
	GinkgoHelper()
	Eventually(Deleted(ctx, c, client.ObjectKeyFromObject(obj), obj)).WithContext(ctx).Should(Succeed())
}

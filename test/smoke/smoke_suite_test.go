package smoke

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/custody-dev/custody/test/testbed"
)

var bed *testbed.Bed

func TestSmoke(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Test bed smoke suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	ctrl.SetLogger(zap.New(zap.WriteTo(GinkgoWriter), zap.UseDevMode(true)))
	var err error
	bed, err = testbed.Start(ctx, testbed.TwoMembers())
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		dir := bed.Dir
		Expect(bed.Stop()).To(Succeed())
		Expect(bed.Processes()).To(BeEmpty(), "processes of the bed in %s outlived Stop", dir)
		Expect(dir).NotTo(BeADirectory())
	})
}, NodeTimeout(testbed.StartTimeout))

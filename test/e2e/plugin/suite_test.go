package plugin

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/testbed"
)

var (
	bed *testbed.Bed
	hub client.Client
)

func TestPlugin(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "kubectl custody suite")
}

// The bed is a hub alone: the plugin reads and writes hub objects only.
var _ = BeforeSuite(func(ctx context.Context) {
	var err error
	bed, err = testbed.Start(ctx, testbed.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(bed.Stop)
	hub = bed.Hub.Client
}, NodeTimeout(testbed.StartTimeout))

package plugin

import (
	"context"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/e2e/framework"
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
	bed = framework.StartBed(ctx, testbed.Options{})
	hub = bed.Hub.Client
}, NodeTimeout(testbed.StartTimeout))

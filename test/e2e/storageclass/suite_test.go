package storageclass

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/environment"
	"github.com/custody-dev/custody/test/testbed"
)

// hub is a client of the suite's hub, where the hub controllers run.
var hub client.Client

func TestStorageClass(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	// A spec's context has no deadline: without this, an Eventually given the context would
	// wait for as long as the test binary lives.
	EnforceDefaultTimeoutsWhenUsingContexts()
	SetDefaultConsistentlyDuration(2 * time.Second)
	RunSpecs(t, "Storage class suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	hub = framework.Start(ctx, environment.Options{}).Hub.Client
}, NodeTimeout(testbed.StartTimeout))

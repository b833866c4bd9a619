package scheduling

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

var hub client.Client

func TestScheduling(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	SetDefaultConsistentlyDuration(3 * time.Second)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Hub scheduling suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	hub = framework.Start(ctx, environment.Options{}).Hub.Client
}, NodeTimeout(testbed.StartTimeout))

package validation

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

// hub is a client of the suite's hub: an API server with Custody's CRDs and nothing else.
var hub client.Client

func TestValidation(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "CRD validation suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	hub = framework.StartBed(ctx, testbed.Options{}).Hub.Client
}, NodeTimeout(testbed.StartTimeout))

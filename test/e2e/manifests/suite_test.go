package manifests

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/custody-dev/custody/test/e2e/framework"
	"github.com/custody-dev/custody/test/testbed"
)

var (
	// bed is a hub and one member, m1, with no CRDs: the hub gets Custody's from config/.
	bed *testbed.Bed
	// root is the repository's root.
	root string
)

func TestManifests(t *testing.T) {
	RegisterFailHandler(Fail)
	SetDefaultEventuallyTimeout(30 * time.Second)
	// A spec's context has no deadline: without this, an Eventually given the context would
	// wait for as long as the test binary lives.
	EnforceDefaultTimeoutsWhenUsingContexts()
	RunSpecs(t, "Manifests suite")
}

var _ = BeforeSuite(func(ctx context.Context) {
	framework.LogToGinkgo()
	var err error
	root, err = testbed.RepoRoot()
	Expect(err).NotTo(HaveOccurred())
	bed = framework.StartBed(ctx, testbed.Options{
		HubCRDs:    []string{},
		MemberCRDs: []string{},
		Members:    []testbed.MemberOptions{{Name: member}},
	})
}, NodeTimeout(testbed.StartTimeout))

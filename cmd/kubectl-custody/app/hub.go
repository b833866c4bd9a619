package app

import (
	"time"

	"github.com/spf13/cobra"
)

// hubCommand groups the commands on the hub as a whole: its status, backup and restore.
func (o *options) hubCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hub",
		Short: "Check the hub's etcd, API servers and controller leader; back up its Custody objects to a file and restore them into an empty hub",
	}
	cmd.AddCommand(o.hubStatusCommand(), o.hubExportCommand(), o.hubImportCommand())
	return cmd
}

func (o *options) hubExportCommand() *cobra.Command {
	f := &hubExportFlags{}
	cmd := &cobra.Command{
		Use:   "export -o FILE",
		Short: "Write every Custody object of the hub, with the namespaces, claims and PVs it coordinates, to a file",
		Long: `Write what a hub needs to go on coordinating its members to one file, which kubectl custody
hub import restores into an empty hub: the second line behind the hub's own etcd backups.

The file holds the hub's identity, which every syncer names what it makes in its member after,
and, each with its status:
  - every object of Custody's API groups (*.custody.dev): SyncTargets, Locations, Placements,
    LocationPairs, Drills, Fences, VolumeOwnerships, VolumeReplications;
  - the namespaces Custody placed or bound to a Placement, or that hold its objects, with
    everything in them (workloads, claims, ConfigMaps, Secrets, Services, roles...), as the
    syncers keep the members in line with them: a restore without them would remove the
    workloads from the members. Events and endpoints are left out, and what the hub makes in
    every namespace itself (the root CA's ConfigMap, legacy token Secrets);
  - every PersistentVolume of the hub: a hub runs no storage, so its PVs are Custody's records
    of the members' volumes, the ones that deleted claims kept included;
  - what an exported object owns elsewhere, such as the key Secret of a LocationPair.
Not in it: Custody's installation (CRDs, roles, the admission policies, config/default), which
the new hub gets first, and the syncers' identities, which import makes anew.

Objects keep their finalizers; an object being deleted is marked so, and import deletes it
again once restored. Each kind is read with one list: an object that changes while export runs
is as its list saw it. The file holds the namespaces' Secrets: keep it as the hub's etcd
backups are kept. It is written readable by its owner only, and export refuses to print it to
a terminal.`,
		Example: "  kubectl custody hub export -o hub-backup.yaml",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.hubExport(cmd.Context(), f)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "-", "The file to write; - is stdout")
	return cmd
}

func (o *options) hubImportCommand() *cobra.Command {
	f := &hubImportFlags{}
	cmd := &cobra.Command{
		Use:   "import FILE --credentials-dir DIR",
		Short: "Restore a hub export into an empty hub and give each joined target's syncer a credential of it",
		Long: `Restore a file that kubectl custody hub export wrote into an empty hub: one with Custody
installed (config/default) and none of its objects, its controller stopped.

Import first writes the exported hub's identity into the ConfigMap
custody-system/custody-hub-identity, which every syncer reads before the UID of kube-system:
the restored hub is the same hub to the syncers, which find their copies in the members under
the same names. A syncer never removes anything from its member while the hub it reads has
another identity, so a hub that was wiped and not yet restored costs the members nothing.

It then creates the objects, owners before what they own, namespaces before what is in them,
claims before the PVs bound to them, and writes each one's status. Each ownerReference and
each PV's claimRef takes the uid of the restored object it names; one that names an object
not in the file is left out, as the garbage collector would delete an object whose owners are
gone. An object that was being deleted is deleted again, so that its deletion resumes behind
its finalizers.

Last, as join does, it gives each SyncTarget's syncer its identity on the restored hub (the
ServiceAccount custody-system/custody-syncer-target-TARGET and its roles) and a token of it,
in a manifest for its member, DIR/TARGET.yaml: a syncer's token names its ServiceAccount's
uid, which the restored hub does not have, so the hub refuses the old ones. Apply each to its
member and restart the syncer there:

  kubectl --kubeconfig TARGET.kubeconfig apply -f DIR/TARGET.yaml
  kubectl --kubeconfig TARGET.kubeconfig -n custody-system rollout restart deployment custody-syncer

then start the controller again. Import refuses a hub the controller runs on (its leader
Lease is held), a hub that holds Custody objects (naming what it found; --merge adds what is
missing beside them and keeps what exists), and a file that is not an export of this format
version, saying why. An import that failed half-way can be run again with --merge: it goes
on from what it restored.`,
		Example: `  kubectl custody hub import hub-backup.yaml --credentials-dir members/
  kubectl --kubeconfig eu-1a.kubeconfig apply -f members/eu-1a.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.file = args[0]
			return o.hubImport(cmd.Context(), f)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.credentialsDir, "credentials-dir", "", "The directory to write each joined target's member manifest to, with its new credential")
	fs.BoolVar(&f.merge, "merge", false, "Import into a hub that holds Custody objects: what exists is kept as it is")
	fs.StringVar(&f.join.syncerImage, "syncer-image", "", "The syncer's image in the manifests (default: the one config/syncer names)")
	fs.StringSliceVar(&f.join.hubServers, "hub-server", nil, hubServerUsage)
	fs.DurationVar(&f.join.credentialTTL, "credential-ttl", time.Hour, "How long the syncers' new hub tokens last until they renew them; at least 10m")
	return cmd
}

#include "cmd/migrate_flags.h"

namespace wasd::cmd {

runtime::FlagSet MigrateFlags(MigrateSettings* s) {
  runtime::FlagSet f(
      "wasd migrate",
      "wasd migrate deployment/NAME|deployment NAME|--all [-n NS]|-A [--plan "
      "in-place|side-by-side] [--new-name NAME] [--apply --plan PLAN [--yes] "
      "[--save-manifest PATH]] [-o yaml|json]\n"
      "       wasd migrate --resume FILE",
      "Hands Deployments that wasd runs (annotation wasd.io/scheduling) over to the in-tree\n"
      "Deployment controller of Kubernetes (KEP-6276, field spec.scheduling, feature gate\n"
      "WorkloadWithDeployment). spec.scheduling cannot be added to an existing Deployment,\n"
      "so a hand-over re-creates it:\n"
      "  in-place      delete the Deployment, create it again with spec.scheduling under\n"
      "                the same name. Downtime: no pods run between the two.\n"
      "  side-by-side  create a second Deployment (--new-name, default NAME-intree) with\n"
      "                the same pod labels, so the same Service selects both; delete the\n"
      "                old one once the new gang is Available. No downtime, but room for\n"
      "                both gangs at once.\n"
      "The new manifest carries the annotation's schedulingPolicy, schedulingConstraints,\n"
      "disruptionMode and resourceClaims as spec.scheduling, without the annotation and\n"
      "without wasd's wasd.io/ labels.\n"
      "\n"
      "By default nothing is written: the plan (as # comments) and the new manifest are\n"
      "printed (the YAML can be fed to kubectl). The cluster is asked, with a server-side\n"
      "dry run, whether it keeps spec.scheduling. --apply runs the plan, which must be\n"
      "named with --plan (no plan that deletes is a default); in-place asks for\n"
      "confirmation on a terminal, and needs --yes otherwise. Before it writes anything,\n"
      "--apply saves each new manifest to a file (--save-manifest) and prints its path:\n"
      "in place, between the delete and the create that file is the only copy of the\n"
      "Deployment. Each step waits (at most --timeout), and the first failure stops it\n"
      "with what exists now and what to do next; a run that was killed or timed out is\n"
      "finished with --resume FILE, which re-enters where the cluster stands (delete,\n"
      "wait, create, or wait for the in-tree controller). The create waits only for the\n"
      "old Deployment to be gone; wasd's Workload and PodGroups of the old one are\n"
      "deleted after it (their names never collide with the in-tree controller's).\n"
      "\n"
      "Refused: a Deployment without the annotation, one that already has\n"
      "spec.scheduling, one on a non-native backend (the in-tree controller makes only\n"
      "scheduling.k8s.io objects), and any on a cluster whose API server drops\n"
      "spec.scheduling (the gate is off). Also runs as `kubectl wasd migrate` (installed\n"
      "as kubectl-wasd).");
  f.String("namespace", &s->ns, "NS",
           "the Deployment's namespace (default: the kubeconfig context's)")
      .Alias('n')
      .Default("");
  f.Bool("all", &s->all, "every Deployment of the namespace that carries wasd.io/scheduling");
  f.Bool("all-namespaces", &s->all_namespaces,
         "every Deployment of every namespace that carries wasd.io/scheduling")
      .Alias('A');
  f.Choice("plan", &s->plan, {"in-place", "side-by-side"},
           "in-place: delete and re-create under the same name (downtime);\n"
           "side-by-side: a new Deployment next to the old one, old one deleted once\n"
           "the new gang is Available");
  f.String("new-name", &s->new_name, "NAME",
           "side-by-side: the new Deployment's name (default NAME-intree; one\n"
           "Deployment only)")
      .Default("");
  f.Bool("apply", &s->apply,
         "run the plan named by --plan (without it: print the plan, write nothing)");
  f.Bool("yes", &s->yes, "--apply --plan in-place: do not ask for confirmation").Alias('y');
  f.String("save-manifest", &s->save_manifest, "PATH",
           "--apply: save each new manifest here before any write (default\n"
           "./wasd-migrate-NS-NAME.yaml; with several Deployments a directory)")
      .Default("");
  f.String("resume", &s->resume, "FILE",
           "finish an in-place hand-over that stopped half way, from the file\n"
           "--apply saved (no Deployment argument)")
      .Default("");
  f.Choice("output", &s->output, {"yaml", "json"},
           "yaml: the plan as # comments over the manifest (one document per\n"
           "Deployment); json: {\"items\": [{namespace, name, plan, newName, steps,\n"
           "downtime, notes, manifest}]}")
      .Alias('o');
  AddConnectionFlags(f, &s->connection);
  f.Duration("timeout", &s->timeout, std::chrono::milliseconds(1),
             "--apply: how long each wait may take (old objects gone, new gang\n"
             "Available), per Deployment");
  f.SetEpilog(
      "Exit status: 0 every plan printed (or, with --apply, carried out); 1 a Deployment was\n"
      "refused, a step failed (the message says what exists and what to do) or the\n"
      "confirmation was declined; 2 bad flags (--apply without --plan, in-place on a\n"
      "non-terminal without --yes) or no client configuration.\n");
  return f;
}

}  // namespace wasd::cmd

// Command kubecp is the test environment's Kubernetes control plane: one binary whose
// subcommands run embedded etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// the fake node's pod exec endpoint, each as its own process, built from the upstream modules on the Go module proxy.
// It is test infrastructure only and must never be shipped with Lifeboat.
package main

import (
	"fmt"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

const usage = "usage: kubecp etcd|kube-apiserver|kube-controller-manager|kube-scheduler|exec-server [flags]"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	sub, args := os.Args[1], os.Args[2:]
	switch sub {
	case "kube-apiserver":
		c := apiserver.NewAPIServerCommand()
		c.SetArgs(args)
		os.Exit(cli.Run(c))
	case "kube-controller-manager":
		c := kcm.NewControllerManagerCommand()
		c.SetArgs(args)
		os.Exit(cli.Run(c))
	case "kube-scheduler":
		c := scheduler.NewSchedulerCommand()
		c.SetArgs(args)
		os.Exit(cli.Run(c))
	case "etcd":
		os.Exit(runEtcd(args))
	case "exec-server":
		os.Exit(runExecServer(args))
	default:
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
}

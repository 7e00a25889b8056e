package main

// The pod exec endpoint of the test cluster's fake node. The apiserver proxies
// `pods/exec` to the node's kubelet port; KWOK keeps nodes and pods alive but reports a
// command's non-zero exit as an internal error, so this server answers exec instead, with the
// kubelet's own streaming library, reporting exit codes as a real kubelet does. Each pod gets
// its own working directory under --root.

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/client-go/util/cert"
	streaming "k8s.io/kubelet/pkg/cri/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

type podExecutor struct {
	root string
}

// podDir is the working directory of a pod's commands: <root>/<namespace>/<pod>.
func (p podExecutor) podDir(name string) (string, error) {
	ns, pod, ok := strings.Cut(name, "/")
	if !ok || ns == "" || pod == "" || strings.Contains(pod, "/") || ns == ".." || pod == ".." {
		return "", fmt.Errorf("bad pod name %q", name)
	}
	dir := filepath.Join(p.root, ns, pod)
	return dir, os.MkdirAll(dir, 0o755)
}

func (p podExecutor) ExecInContainer(ctx context.Context, name string, _ types.UID, container string, cmd []string, in io.Reader, out, errOut io.WriteCloser, _ bool, _ <-chan remotecommand.TerminalSize, timeout time.Duration) error {
	if len(cmd) == 0 {
		return errors.New("no command")
	}
	dir, err := p.podDir(name)
	if err != nil {
		return err
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	ns, pod, _ := strings.Cut(name, "/")
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Dir = dir
	c.Env = append(os.Environ(), "POD_NAMESPACE="+ns, "POD_NAME="+pod, "CONTAINER_NAME="+container, "POD_DIR="+dir)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Kill the whole process group, so a shell's children do not outlive a timeout.
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second
	if in != nil {
		c.Stdin = in
	}
	c.Stdout, c.Stderr = out, errOut
	err = c.Run()
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code := exitErr.ExitCode()
		if code < 0 {
			code = 137 // killed by a signal, as a container runtime reports it
		}
		// A kubelet reports this type, which becomes the NonZeroExitCode status.
		return utilexec.CodeExitError{Err: err, Code: code}
	}
	return err
}

func runExecServer(args []string) int {
	fs := flag.NewFlagSet("exec-server", flag.ExitOnError)
	address := fs.String("address", "127.0.0.1:10250", "listen address")
	root := fs.String("root", "", "directory holding each pod's working directory")
	_ = fs.Parse(args)
	if *root == "" {
		fmt.Fprintln(os.Stderr, "exec-server: --root is required")
		return 2
	}
	host, _, err := net.SplitHostPort(*address)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exec-server: --address:", err)
		return 2
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(host, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "exec-server:", err)
		return 1
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		fmt.Fprintln(os.Stderr, "exec-server:", err)
		return 1
	}
	executor := podExecutor{root: *root}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	// The apiserver calls /exec/<namespace>/<pod>/<container>?command=…&command=…
	mux.HandleFunc("/exec/", func(w http.ResponseWriter, req *http.Request) {
		parts := strings.Split(strings.TrimPrefix(req.URL.Path, "/exec/"), "/")
		if len(parts) != 3 && len(parts) != 4 {
			http.Error(w, "expected /exec/<namespace>/<pod>/[<uid>/]<container>", http.StatusNotFound)
			return
		}
		container := parts[len(parts)-1]
		opts, err := streaming.NewOptions(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		streaming.ServeExec(w, req, executor, parts[0]+"/"+parts[1], "", container, req.URL.Query()["command"], opts,
			4*time.Hour, 30*time.Second, remotecommandconsts.SupportedStreamingProtocols)
	})
	server := &http.Server{
		Addr:              *address,
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
	}
	fmt.Fprintln(os.Stderr, "exec-server: listening on", *address)
	if err := server.ListenAndServeTLS("", ""); err != nil {
		fmt.Fprintln(os.Stderr, "exec-server:", err)
		return 1
	}
	return 0
}

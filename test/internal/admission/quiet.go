package admission

import (
	"flag"
	"io"

	"k8s.io/klog/v2"
	kvlog "kubevirt.io/client-go/log"
)

// The upstream webhooks log every review (CDI through klog, KubeVirt
// through its own logger); the findings say what matters, so the logs are
// discarded unless VIRTC_ADMISSION_LOG is set (see admission_test.go).
func quiet() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
	kvlog.Log.SetIOWriter(io.Discard)
}

package bench

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSpawnerCountsTheCommandOnly: with the driver holding 256 MiB, a
// shell that holds 64 MiB reports about 64 MiB through the spawner, and a
// shell that holds nothing a few; a command that fails is an error.
func TestSpawnerCountsTheCommandOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the figures below are Linux's (ru_maxrss in KiB, vfork at exec)")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	held := make([]byte, 256<<20)
	for i := 0; i < len(held); i += 4096 {
		held[i] = 1
	}
	idle := Command{Name: sh, Args: []string{"-c", ":"}}
	// 64 MiB in a shell variable, through a pipe, then nothing held
	busy := Command{Name: sh, Args: []string{"-c", `x=$(head -c 67108864 /dev/zero | tr '\0' a); test ${#x} -eq 67108864`}}

	direct, err := Measure(idle, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := UseSpawner(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { spawner = "" })
	quiet, err := Measure(idle, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	loud, err := Measure(busy, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(held)
	t.Logf("started by the driver: %d KiB; through the spawner: %d KiB idle, %d KiB holding 64 MiB", direct.PeakRSS>>10, quiet.PeakRSS>>10, loud.PeakRSS>>10)
	if quiet.PeakRSS <= 0 || quiet.PeakRSS > 8<<20 {
		t.Errorf("an idle shell through the spawner: peak RSS %d KiB, want a few MiB, not the driver's %d", quiet.PeakRSS>>10, direct.PeakRSS>>10)
	}
	if loud.PeakRSS < 64<<20 || loud.PeakRSS > 160<<20 {
		t.Errorf("a shell holding 64 MiB through the spawner: peak RSS %d KiB, want 64 MiB and some", loud.PeakRSS>>10)
	}
	if loud.CPU <= 0 {
		t.Errorf("a shell that copied 64 MiB through the spawner: CPU %v, want its time", loud.CPU)
	}
	_, err = Measure(Command{Name: sh, Args: []string{"-c", "echo broken >&2; exit 3"}}, time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing command through the spawner: error %v, want its exit status and stderr", err)
	}
}

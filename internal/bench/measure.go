package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// Sample is one measured process run.
type Sample struct {
	Wall time.Duration
	// PeakRSS is the process's maximum resident set, in bytes (0 where the
	// platform does not report it).
	PeakRSS int64
	// CPU is the process's user and system time.
	CPU time.Duration
	// Output is the number of bytes the process wrote to stdout.
	Output int64
	// TimedOut is set when the run was killed at the time limit.
	TimedOut bool
}

// Command is a process to measure.
type Command struct {
	Name string
	Args []string
	Dir  string
	Env  []string
	// Stdin is a file to read standard input from (none when empty).
	Stdin string
}

func (c Command) String() string { return strings.Join(append([]string{c.Name}, c.Args...), " ") }

// countingWriter counts bytes and throws them away: the output is not
// kept, so that the driver's memory does not grow with it.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// Measure runs c once and measures it. A run that exceeds limit is killed and
// reported as TimedOut; a run that fails is an error with its stderr.
func Measure(c Command, limit time.Duration) (Sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	var report *os.File
	if spawner != "" {
		var err error
		if cmd, report, err = spawned(ctx, cmd); err != nil {
			return Sample{}, fmt.Errorf("%s: %v", c, err)
		}
		defer os.Remove(report.Name())
		defer report.Close()
	}
	if c.Env != nil {
		cmd.Env = c.Env
	}
	if c.Stdin != "" {
		f, err := os.Open(c.Stdin)
		if err != nil {
			return Sample{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out countingWriter
	var stderr bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &limitedBuffer{b: &stderr, max: 64 << 10}
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	s := Sample{Wall: time.Since(start), Output: out.n}
	if cmd.ProcessState != nil {
		s.PeakRSS = peakRSS(cmd.ProcessState)
		s.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ctx.Err() == context.DeadlineExceeded {
		s.TimedOut = true
		return s, nil
	}
	if err == nil && report != nil {
		// the command's own figures, not the spawner's
		s.PeakRSS, s.CPU, err = readReport(report)
	}
	if err != nil {
		return s, fmt.Errorf("%s: %v\n%s", c, err, strings.TrimSpace(stderr.String()))
	}
	return s, nil
}

// limitedBuffer keeps the first max bytes of a stream.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

var _ io.Writer = (*limitedBuffer)(nil)

// Summary is the median of a series of runs.
type Summary struct {
	Runs     int
	Wall     time.Duration
	CPU      time.Duration
	PeakRSS  int64
	Output   int64
	TimedOut bool
	// Limit is the time limit of the runs, for "> limit".
	Limit time.Duration
	// Missing says why there are no runs (for example a tool that is not
	// available); empty when there are.
	Missing string
}

// Summarize takes the medians of samples. A series that timed out once
// counts as timed out: its median is unknown but above the limit.
func Summarize(samples []Sample, limit time.Duration) Summary {
	s := Summary{Runs: len(samples), Limit: limit}
	if len(samples) == 0 {
		return s
	}
	var walls, cpus []time.Duration
	var rss, out []int64
	for _, x := range samples {
		if x.TimedOut {
			s.TimedOut = true
		}
		walls = append(walls, x.Wall)
		cpus = append(cpus, x.CPU)
		rss = append(rss, x.PeakRSS)
		out = append(out, x.Output)
	}
	s.Wall, s.CPU, s.PeakRSS, s.Output = median(walls), median(cpus), median(rss), median(out)
	return s
}

// median of a non-empty series; the lower middle for an even count, so
// that the result is always one of the measurements.
func median[T int64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

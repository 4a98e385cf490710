//go:build unix

package cmp

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// lockHelperEnv makes the test binary a process that takes a key's lock,
// says so and waits to be killed (TestLockHelper).
const lockHelperEnv = "VIRTC_CMP_LOCK_HELPER"

// lockKey is the key TestLock and its helper lock: one of a key's form,
// so that pruning knows its lock file as the cache's.
var lockKey = strings.Repeat("4b", 32)

// The key's lock: a second call of the key waits for the first and says
// it waited; a call whose process is killed leaves the lock free and its
// file the only trace, which pruning removes once it is an hour old.
func TestLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	c := &Call{dir: dir, key: lockKey}
	release, waited := c.Lock(nil)
	if waited {
		t.Fatal("the first lock of a key waited")
	}
	got := make(chan bool)
	lockLater(c, got)
	select {
	case <-got:
		t.Fatal("a second lock of the key did not wait for the first")
	case <-time.After(200 * time.Millisecond):
	}
	release()
	release() // a second release is a no-op
	if w := <-got; !w {
		t.Fatal("the second lock says it did not wait")
	}
	if other, waited := (&Call{dir: dir, key: strings.Repeat("0", 64)}).Lock(nil); waited {
		t.Fatal("another key's lock waited")
	} else {
		other()
	}

	// a process holding the lock, killed (kill -9)
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		cmd.Process.Kill()
		t.Fatalf("helper: %q, %v", line, err)
	}
	lockLater(c, got)
	select {
	case <-got:
		t.Fatal("the lock was taken while the helper process held it")
	case <-time.After(200 * time.Millisecond):
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	select {
	case w := <-got:
		if !w {
			t.Error("the lock after the helper's death says it did not wait")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lock of a killed process is still held")
	}

	// prune: the lock file stays while it is young, goes after an hour
	lock := filepath.Join(dir, lockPrefix+lockKey)
	c.prune()
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("a fresh lock file was pruned: %v", err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	c.prune()
	if _, err := os.Stat(lock); !os.IsNotExist(err) {
		t.Errorf("a lock file two hours old was not pruned: %v", err)
	}
}

// lockLater takes and releases c's lock in a goroutine, then sends
// whether it waited.
func lockLater(c *Call, got chan<- bool) {
	go func() {
		r, w := c.Lock(nil)
		r()
		got <- w
	}()
}

// TestLockHelper is the process TestLock kills while it holds a lock.
func TestLockHelper(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("run by TestLock")
	}
	(&Call{dir: dir, key: lockKey}).Lock(nil)
	os.Stdout.WriteString("locked\n")
	time.Sleep(time.Minute)
}

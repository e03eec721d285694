package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/httpapi/app/throwaway"
)

// The figures of logstore/otlp's documentation, opt-in (they take minutes
// and gigabytes): with STRONGBOX_VICTORIALOGS set,
//
//	STRONGBOX_EXPORT_MILLION=1 go test -count=1 -v -run TestExportMillion .
//	STRONGBOX_EXPORT_CATCHUP=1 go test -count=1 -v -run TestExportCatchUp .

// exportState reads GET /api/logs/export.
type exportState struct {
	Behind, Exported, Failed, Lost int64
	LastError                      string
}

func readExport(t *testing.T, client *http.Client, base, token string) exportState {
	t.Helper()
	_, body := vlDo(t, client, "GET", base+"/api/logs/export", token, "")
	var st exportState
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("GET /api/logs/export: %v: %s", err, body)
	}
	return st
}

// rssSampler reads VmRSS of pid every 0.5 s until stop.
type rssSampler struct {
	mu   sync.Mutex
	kb   []int
	stop chan struct{}
	done chan struct{}
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
			if err == nil {
				for line := range strings.Lines(string(b)) {
					if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
						n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
						s.mu.Lock()
						s.kb = append(s.kb, n)
						s.mu.Unlock()
					}
				}
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// summary stops the sampler and returns min, median and max in MiB.
func (s *rssSampler) summary() string {
	close(s.stop)
	<-s.done
	kb := slices.Clone(s.kb)
	slices.Sort(kb)
	if len(kb) == 0 {
		return "no samples"
	}
	mib := func(k int) float64 { return float64(k) / 1024 }
	return fmt.Sprintf("RSS min %.0f, median %.0f, max %.0f MiB (%d samples)", mib(kb[0]), mib(kb[len(kb)/2]), mib(kb[len(kb)-1]), len(kb))
}

// TestExportMillion seeds 1,000,000 request logs (`strongbox logs seed`),
// starts the binary exporting to VictoriaLogs on loopback and times the
// drain until GET /api/logs/export says nothing is behind, sampling the
// server's RSS every 0.5 s.
func TestExportMillion(t *testing.T) {
	if os.Getenv("STRONGBOX_EXPORT_MILLION") == "" {
		t.Skip("STRONGBOX_EXPORT_MILLION not set (a figure: minutes, about 1 GB of disk)")
	}
	vl := startVictoriaLogs(t)
	bin := strongboxBinary(t)
	dir := t.TempDir()
	const n = 1_000_000
	seedStart := time.Now()
	if out, err := exec.Command(bin, "logs", "seed", "--n", strconv.Itoa(n), "--dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("logs seed: %v\n%s", err, out)
	}
	t.Logf("seeded %d logs in %v", n, time.Since(seedStart).Round(time.Millisecond))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Minute)
	defer cancel()
	log := &syncBuffer{}
	env := []string{"STRONGBOX_BCRYPT_COST=4", "STRONGBOX_SUPERUSER_EMAIL=" + vlEmail, "STRONGBOX_SUPERUSER_PASSWORD=" + vlPassword, vl.endpoint()}
	start := time.Now()
	c, err := throwaway.StartProcess(ctx, bin, "127.0.0.1:0", dir, env, log)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	defer c.Stop()
	rss := sampleRSS(c.Cmd.Process.Pid)
	client := &http.Client{Timeout: 30 * time.Second}
	token := vlLogin(t, client, c.Base)
	var st exportState
	for st = readExport(t, client, c.Base, token); st.Exported < n || st.Behind > 0; st = readExport(t, client, c.Base, token) {
		if ctx.Err() != nil {
			t.Fatalf("not drained within 20 min: %+v", st)
		}
		time.Sleep(500 * time.Millisecond)
	}
	d := time.Since(start)
	t.Logf("drained %d logs in %v from the start: %.0f logs/s; %s; state %+v", st.Exported, d.Round(time.Millisecond), float64(st.Exported)/d.Seconds(), rss.summary(), st)
	if st.Failed != 0 || st.Lost != 0 {
		t.Errorf("state %+v", st)
	}
}

// TestExportCatchUp logs about 1,000 requests a second (GET /api/health,
// each a log), stops VictoriaLogs for 60 s, starts it again, and times
// how long until the export is caught up again (at most one batch, 1,000
// logs, behind) while the load goes on.
func TestExportCatchUp(t *testing.T) {
	if os.Getenv("STRONGBOX_EXPORT_CATCHUP") == "" {
		t.Skip("STRONGBOX_EXPORT_CATCHUP not set (a figure: about 2 minutes)")
	}
	vl := startVictoriaLogs(t)
	bin := strongboxBinary(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	log := &syncBuffer{}
	env := []string{"STRONGBOX_BCRYPT_COST=4", "STRONGBOX_SUPERUSER_EMAIL=" + vlEmail, "STRONGBOX_SUPERUSER_PASSWORD=" + vlPassword, vl.endpoint()}
	c, err := throwaway.StartProcess(ctx, bin, "127.0.0.1:0", t.TempDir(), env, log)
	if err != nil {
		t.Fatalf("serve: %v\n%s", err, log)
	}
	defer c.Stop()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	token := vlLogin(t, client, c.Base)
	// 10 workers, each 100 requests a second on a schedule.
	const workers, perWorker = 10, 100
	var sent sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	count := 0
	loadStart := time.Now()
	for w := range workers {
		sent.Add(1)
		go func() {
			defer sent.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := client.Get(fmt.Sprintf("%s/api/health?w=%d&i=%d", c.Base, w, i))
				if err == nil {
					res.Body.Close()
					mu.Lock()
					count++
					mu.Unlock()
				}
				time.Sleep(time.Until(loadStart.Add(time.Duration(i+1) * time.Second / perWorker)))
			}
		}()
	}
	defer func() { close(stop); sent.Wait() }()
	time.Sleep(5 * time.Second)
	vl.stop()
	down := time.Now()
	time.Sleep(60 * time.Second)
	before := readExport(t, client, c.Base, token)
	vl.start(t)
	up := time.Now()
	mu.Lock()
	rate := float64(count) / time.Since(loadStart).Seconds()
	mu.Unlock()
	var st exportState
	for st = readExport(t, client, c.Base, token); st.Behind > 1000 || st.LastError != "" && st.Exported == before.Exported; st = readExport(t, client, c.Base, token) {
		if ctx.Err() != nil {
			t.Fatalf("not caught up: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("outage %v at %.0f requests/s; behind at the restart %d; caught up (≤ 1,000 behind) %v after the receiver's start; state %+v",
		up.Sub(down).Round(time.Millisecond), rate, before.Behind, time.Since(up).Round(time.Millisecond), st)
	var buf bytes.Buffer
	buf.WriteString(log.String())
	if strings.Contains(buf.String(), "deleted before they were exported") {
		t.Errorf("logs lost:\n%s", buf.String())
	}
}

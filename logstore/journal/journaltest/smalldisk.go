package journaltest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// SmallDisk gives test t a folder on a real tmpfs of the given size (as
// mount's size option: "256k", "2m"), so that it can fill a real disk and
// free it again. The tmpfs is mounted in a user and mount namespace
// (unshare -rm, no root needed): the test runs itself again inside it, with
// the environment variable env naming the mount. There SmallDisk returns
// the mount; outside it returns "" once that run passed (failing t
// otherwise), and the caller returns. Where namespaces are not allowed,
// and with -short, t is skipped.
func SmallDisk(t *testing.T, size, env string) string {
	t.Helper()
	if dir := os.Getenv(env); dir != "" {
		return dir
	}
	if testing.Short() {
		t.Skip("short mode")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare command")
	}
	mnt := t.TempDir()
	mount := `mount -t tmpfs -o size=` + size + ` tmpfs "$1"`
	if out, err := exec.Command(unshare, "-rm", "sh", "-c", mount, "sh", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs in a user namespace: %v %s", err, out)
	}
	out, err := exec.Command(unshare, "-rm", "sh", "-c",
		mount+` && `+env+`="$1" exec "$2" -test.run="^$3\$" -test.v -test.count=1`,
		"sh", mnt, os.Args[0], t.Name()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("inside the namespace: %v\n%s", err, out)
	}
	t.Logf("inside the namespace:\n%s", out)
	return ""
}

package zookeeper

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// hang, as a fake's answer, makes it read the word and then answer nothing
// until the test ends.
const hang = "\x00hang"

// fakeZK is a ZooKeeper client port that answers four-letter words with
// recorded answers: it reads the 4-byte word, writes the answer and closes,
// as NIOServerCnxn does. A word with no answer gets the connection closed
// with nothing written.
type fakeZK struct {
	addr    string
	answers map[string]string
	done    chan struct{}

	mu    sync.Mutex
	asked []string
}

// startFake starts a fakeZK on 127.0.0.1 that lives until the test ends.
func startFake(t *testing.T, answers map[string]string) *fakeZK {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	f := &fakeZK{addr: ln.Addr().String(), answers: answers, done: make(chan struct{})}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(f.done)
		ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { f.serve(conn) })
		}
	})
	return f
}

func (f *fakeZK) serve(conn net.Conn) {
	defer conn.Close()
	word := make([]byte, 4)
	if _, err := io.ReadFull(conn, word); err != nil {
		return
	}
	f.mu.Lock()
	f.asked = append(f.asked, string(word))
	f.mu.Unlock()
	answer, ok := f.answers[string(word)]
	if !ok {
		return
	}
	if answer == hang {
		<-f.done
		return
	}
	_, _ = io.WriteString(conn, answer)
}

// wasAsked reports whether the fake was asked word.
func (f *fakeZK) wasAsked(word string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Contains(f.asked, word)
}

// deadAddr is the address of a port nothing listens on any more.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// testdata is the content of testdata/name.
func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("testdata: %v", err)
	}
	return string(b)
}

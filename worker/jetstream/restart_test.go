package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestRestartKeepsStreamsAndClients: after Restart, a client made before it reconnects by itself, the stream and
// its messages are there, and writes are stored again.
func TestRestartKeepsStreamsAndClients(t *testing.T) {
	t.Parallel()
	s, err := StartServer(ServerConfig{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	nc, err := s.Connect("restart")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "s", []byte("before")); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := js.Publish(pctx, "s", []byte("after"))
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write stored after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	st, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.State.Msgs != 2 {
		t.Fatalf("stream after the restart: %+v, %v", info, err)
	}
}

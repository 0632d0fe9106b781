package conn_test

import (
	"os"
	"testing"
	"time"

	"github.com/natsio/natsio/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.RunIfChild()
	os.Exit(m.Run())
}

func deadlineFar() time.Time { return time.Now().Add(time.Hour) }

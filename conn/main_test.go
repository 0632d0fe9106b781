package conn_test

import (
	"os"
	"testing"
	"time"

	"github.com/natsio/natsio/natstest"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

func deadlineFar() time.Time { return time.Now().Add(time.Hour) }

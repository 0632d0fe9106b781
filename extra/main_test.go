package extra_test

import (
	"os"
	"testing"

	"github.com/natsio/natsio/natstest"
)

func TestMain(m *testing.M) {
	natstest.RunIfChild()
	os.Exit(m.Run())
}

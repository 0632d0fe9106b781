package extra_test

import (
	"os"
	"testing"

	"github.com/natsio/natsio/internal/testserver"
)

func TestMain(m *testing.M) {
	testserver.RunIfChild()
	os.Exit(m.Run())
}

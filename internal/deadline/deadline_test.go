package deadline

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/natsio/natsio/conn"
)

func TestErr(t *testing.T) {
	if Err(nil) != nil {
		t.Fatal("nil")
	}
	wrapped := fmt.Errorf("read: %w", context.DeadlineExceeded)
	err := Err(wrapped)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, conn.ErrTimeout) || err.Error() != wrapped.Error() {
		t.Fatalf("Err(%v) = %v", wrapped, err)
	}
	if err := Err(context.Canceled); err != context.Canceled {
		t.Fatalf("Err(Canceled) = %v", err)
	}
	if err := Err(conn.ErrTimeout); err != conn.ErrTimeout {
		t.Fatalf("Err(ErrTimeout) = %v", err)
	}
}

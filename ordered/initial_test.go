package ordered_test

import (
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
)

// InitialPending is what New's consumer had to deliver when it was
// created: messages published afterwards do not change it.
func TestInitialPending(t *testing.T) {
	e := newEnv(t, jsapi.StorageMemory)
	e.publish(t, "o.a", 3)
	e.publish(t, "o.b", 2)
	oc := newOrdered(t, e.js, "O", ordered.Config{FilterSubjects: []string{"o.a"}})
	e.publish(t, "o.a", 4)
	if n := oc.InitialPending(); n != 3 {
		t.Fatalf("InitialPending = %d; want 3", n)
	}
	last := newOrdered(t, e.js, "O", ordered.Config{DeliverPolicy: jsapi.DeliverLastPerSubject})
	if n := last.InitialPending(); n != 2 {
		t.Fatalf("last per subject: InitialPending = %d; want 2", n)
	}
}

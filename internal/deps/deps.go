package deps
import (
 _ "github.com/nats-io/nats-server/v2/server"
 _ "github.com/nats-io/nkeys"
 _ "github.com/nats-io/nuid"
 _ "github.com/klauspost/compress/flate"
)

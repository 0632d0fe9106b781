module github.com/natsio/natsio/bench

go 1.26.0

replace github.com/natsio/natsio => ../

require (
	github.com/nats-io/nats-server/v2 v2.15.2
	github.com/nats-io/nats.go v1.56.0
	github.com/natsio/natsio v0.0.0-00010101000000-000000000000
	github.com/synadia-io/orbit.go/kvcodec v0.1.3
	github.com/synadia-io/orbit.go/pcgroups v0.2.2
	golang.org/x/sys v0.50.0
)

require (
	github.com/antithesishq/antithesis-sdk-go v0.8.0-default-no-op // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/minio/highwayhash v1.0.4 // indirect
	github.com/nats-io/jwt/v2 v2.8.2 // indirect
	github.com/nats-io/nkeys v0.4.17 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.59.0 // indirect
	golang.org/x/time v0.16.0 // indirect
)

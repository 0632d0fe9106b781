module github.com/natsio/natsio/compat

go 1.26.0

require github.com/natsio/natsio v0.0.0

require (
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/nats-io/nkeys v0.4.17 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

replace github.com/natsio/natsio => ../

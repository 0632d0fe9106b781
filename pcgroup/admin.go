package pcgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
)

// Kind is the kind of a group: static or elastic.
type Kind uint8

const (
	// Static groups consume a stream whose subjects already carry the
	// partition number; their membership is fixed while members run.
	Static Kind = iota + 1
	// Elastic groups source a stream into a work-queue stream that adds
	// the partition number; members come and go while members run.
	Elastic
)

// String returns "static" or "elastic".
func (k Kind) String() string {
	switch k {
	case Static:
		return "static"
	case Elastic:
		return "elastic"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) bucket() (string, error) {
	switch k {
	case Static:
		return StaticBucket, nil
	case Elastic:
		return ElasticBucket, nil
	}
	return "", fmt.Errorf("%w: unknown group kind %d", ErrInvalidConfig, uint8(k))
}

func checkNames(stream, group string) error {
	if err := jsapi.ValidateName(stream); err != nil {
		return err
	}
	if err := jsapi.ValidateName(group); err != nil {
		return err
	}
	if strings.Contains(group, ".") || strings.Contains(stream, ".") {
		return fmt.Errorf("%w: %q.%q", jsapi.ErrInvalidName, stream, group)
	}
	return nil
}

// bind returns the bucket of kind, ErrGroupNotFound when it does not exist.
func bind(ctx context.Context, js *jsapi.JS, k Kind) (*kv.Bucket, error) {
	name, err := k.bucket()
	if err != nil {
		return nil, err
	}
	b, err := kv.Bind(ctx, js, name)
	if errors.Is(err, kv.ErrBucketNotFound) {
		return nil, fmt.Errorf("%w: no %s bucket", ErrGroupNotFound, name)
	}
	return b, err
}

// bindOrCreate binds the bucket of kind, creating it (file storage, with
// replicas) when missing.
func bindOrCreate(ctx context.Context, js *jsapi.JS, k Kind, replicas int) (*kv.Bucket, error) {
	name, _ := k.bucket()
	b, err := kv.Bind(ctx, js, name)
	if errors.Is(err, kv.ErrBucketNotFound) {
		b, err = kv.CreateBucket(ctx, js, kv.Config{Bucket: name, Replicas: replicas, Storage: jsapi.StorageFile})
		if errors.Is(err, jsapi.ErrStreamNameInUse) {
			b, err = kv.Bind(ctx, js, name)
		}
	}
	return b, err
}

// load reads and validates a group's configuration into cfg (a
// *StaticConfig or *ElasticConfig), returning its revision.
func load(ctx context.Context, b *kv.Bucket, stream, group string, cfg interface{ Validate() error }) (uint64, error) {
	e, err := b.Get(ctx, key(stream, group))
	if errors.Is(err, kv.ErrKeyNotFound) {
		return 0, fmt.Errorf("%w: %s %s", ErrGroupNotFound, b.Name(), key(stream, group))
	}
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(e.Value, cfg); err != nil {
		return 0, fmt.Errorf("%w: %s: %v", ErrInvalidConfig, key(stream, group), err)
	}
	return e.Revision, cfg.Validate()
}

// create stores cfg under the group's key unless one is there; an
// existing one must be equal (by same()).
func create[C interface{ Validate() error }](ctx context.Context, b *kv.Bucket, stream, group string, cfg C, existing C, same func() bool) error {
	data, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	_, err = b.Create(ctx, key(stream, group), data)
	if err == nil || !errors.Is(err, kv.ErrKeyExists) {
		return err
	}
	if _, err := load(ctx, b, stream, group, existing); err != nil {
		return err
	}
	if !same() {
		return fmt.Errorf("%w: %s", ErrConfigMismatch, key(stream, group))
	}
	return nil
}

// CreateStatic creates the static group group on stream (which must exist)
// with cfg, creating the StaticBucket when missing (with the stream's
// replicas). Creating a group that exists with an equal configuration
// succeeds; with another, it fails with ErrConfigMismatch. Servers before
// 2.11 fail with a *jsapi.FeatureError, before anything is sent.
func CreateStatic(ctx context.Context, js *jsapi.JS, stream, group string, cfg StaticConfig) (*StaticConfig, error) {
	if err := checkNames(stream, group); err != nil {
		return nil, err
	}
	if err := js.Check(ctx, jsapi.FeaturePriorityGroups); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	b, err := bindOrCreate(ctx, js, Static, st.CachedInfo().Config.Replicas)
	if err != nil {
		return nil, err
	}
	var old StaticConfig
	err = create(ctx, b, stream, group, &cfg, &old, func() bool {
		return old.MaxMembers == cfg.MaxMembers && slices.Equal(old.Filters, cfg.Filters) &&
			slices.Equal(old.Members, cfg.Members) && reflect.DeepEqual(old.MemberMappings, cfg.MemberMappings)
	})
	if err != nil {
		return nil, err
	}
	return &cfg, nil
}

// CreateElastic creates the elastic group group on stream (which must
// exist) with cfg: its configuration in the ElasticBucket (created when
// missing) and its work-queue stream ElasticStreamName(stream, group),
// which sources stream through subject transforms that put the partition
// number first. The group's stream has stream's replicas and storage,
// cfg's buffer limits and DiscardNew. Creating a group that exists with an
// equal configuration succeeds (and makes its stream if missing); with
// another, it fails with ErrConfigMismatch. A filter without partitioning
// wildcards (or no filter) partitions by the whole subject, a transform
// nats-server 2.11 refuses (an *jsapi.APIError) and 2.12+ accepts. Servers
// before 2.11 fail with a *jsapi.FeatureError, before anything is sent.
func CreateElastic(ctx context.Context, js *jsapi.JS, stream, group string, cfg ElasticConfig) (*ElasticConfig, error) {
	if err := checkNames(stream, group); err != nil {
		return nil, err
	}
	if err := js.Check(ctx, jsapi.FeaturePriorityGroups); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	st, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, err
	}
	sc := st.CachedInfo().Config
	b, err := bindOrCreate(ctx, js, Elastic, sc.Replicas)
	if err != nil {
		return nil, err
	}
	var old ElasticConfig
	err = create(ctx, b, stream, group, &cfg, &old, func() bool {
		return old.MaxMembers == cfg.MaxMembers && reflect.DeepEqual(old.PartitioningFilters, cfg.PartitioningFilters) &&
			old.MaxBufferedMsgs == cfg.MaxBufferedMsgs && old.MaxBufferedBytes == cfg.MaxBufferedBytes
	})
	if err != nil {
		return nil, err
	}
	if old.MaxMembers != 0 {
		cfg = old
	}
	var transforms []jsapi.SubjectTransformConfig
	for _, pf := range cfg.PartitioningFilters {
		transforms = append(transforms, jsapi.SubjectTransformConfig{Source: pf.Filter, Destination: transformDest(pf, cfg.MaxMembers)})
	}
	if len(transforms) == 0 {
		transforms = []jsapi.SubjectTransformConfig{{Source: ">", Destination: transformDest(PartitioningFilter{Filter: ">"}, cfg.MaxMembers)}}
	}
	_, err = js.CreateStream(ctx, jsapi.StreamConfig{
		Name:        ElasticStreamName(stream, group),
		Retention:   jsapi.RetentionWorkQueue,
		Replicas:    sc.Replicas,
		Storage:     sc.Storage,
		MaxMsgs:     cfg.MaxBufferedMsgs,
		MaxBytes:    cfg.MaxBufferedBytes,
		Discard:     jsapi.DiscardNew,
		Sources:     []jsapi.StreamSource{{Name: stream, SubjectTransforms: transforms}},
		AllowDirect: true,
	})
	if err != nil {
		return nil, fmt.Errorf("pcgroup: elastic group stream: %w", err)
	}
	return &cfg, nil
}

// GetStatic returns a static group's configuration (ErrGroupNotFound when
// there is none).
func GetStatic(ctx context.Context, js *jsapi.JS, stream, group string) (*StaticConfig, error) {
	if err := checkNames(stream, group); err != nil {
		return nil, err
	}
	b, err := bind(ctx, js, Static)
	if err != nil {
		return nil, err
	}
	var cfg StaticConfig
	if _, err := load(ctx, b, stream, group, &cfg); err != nil {
		return nil, err
	}
	return &cfg, nil
}

// GetElastic returns an elastic group's configuration (ErrGroupNotFound
// when there is none).
func GetElastic(ctx context.Context, js *jsapi.JS, stream, group string) (*ElasticConfig, error) {
	cfg, _, err := getElastic(ctx, js, stream, group)
	return cfg, err
}

func getElastic(ctx context.Context, js *jsapi.JS, stream, group string) (*ElasticConfig, uint64, error) {
	if err := checkNames(stream, group); err != nil {
		return nil, 0, err
	}
	b, err := bind(ctx, js, Elastic)
	if err != nil {
		return nil, 0, err
	}
	var cfg ElasticConfig
	rev, err := load(ctx, b, stream, group, &cfg)
	if err != nil {
		return nil, 0, err
	}
	return &cfg, rev, nil
}

// Delete deletes a group: its configuration (members watching it stop)
// and, for a static group, its members' consumers on the stream, for an
// elastic one its work-queue stream. Deleting a group that does not exist
// is not an error, except that a missing stream is.
func Delete(ctx context.Context, js *jsapi.JS, k Kind, stream, group string) error {
	if err := checkNames(stream, group); err != nil {
		return err
	}
	b, err := bind(ctx, js, k)
	if err != nil && !errors.Is(err, ErrGroupNotFound) {
		return err
	}
	if b != nil {
		if err := b.Delete(ctx, key(stream, group)); err != nil && !errors.Is(err, kv.ErrKeyNotFound) {
			return err
		}
	}
	if k == Elastic {
		err := js.DeleteStream(ctx, ElasticStreamName(stream, group))
		if errors.Is(err, jsapi.ErrStreamNotFound) {
			return nil
		}
		return err
	}
	var errs []error
	for name, err := range js.ConsumerNames(ctx, stream) {
		if err != nil {
			return err
		}
		if strings.HasPrefix(name, group+"-") {
			if err := js.DeleteConsumer(ctx, stream, name); err != nil && !errors.Is(err, jsapi.ErrConsumerNotFound) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// List returns the names of the groups of kind on stream (none when the
// kind's bucket does not exist yet).
func List(ctx context.Context, js *jsapi.JS, k Kind, stream string) ([]string, error) {
	if err := checkNames(stream, "x"); err != nil {
		return nil, err
	}
	b, err := bind(ctx, js, k)
	if errors.Is(err, ErrGroupNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for key, err := range b.ListKeys(ctx, stream+".*") {
		if err != nil {
			return nil, err
		}
		names = append(names, key[len(stream)+1:])
	}
	return names, nil
}

// update changes an elastic group's configuration with f, as a
// compare-and-set on its revision (kv.ErrRevisionMismatch when another
// change came first).
func update(ctx context.Context, js *jsapi.JS, stream, group string, f func(*ElasticConfig) error) (*ElasticConfig, error) {
	cfg, rev, err := getElastic(ctx, js, stream, group)
	if err != nil {
		return nil, err
	}
	if err := f(cfg); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	b, err := bind(ctx, js, Elastic)
	if err != nil {
		return nil, err
	}
	if _, err := b.Update(ctx, key(stream, group), data, rev); err != nil {
		return nil, err
	}
	return cfg, nil
}

// AddMembers adds members to an elastic group and returns its membership.
// Running members take the change without restarting. A group with
// member mappings refuses it (ErrMappingsInUse).
func AddMembers(ctx context.Context, js *jsapi.JS, stream, group string, members ...string) ([]string, error) {
	cfg, err := update(ctx, js, stream, group, func(c *ElasticConfig) error {
		if len(c.MemberMappings) > 0 {
			return ErrMappingsInUse
		}
		for _, m := range members {
			if err := jsapi.ValidateName(m); err != nil {
				return err
			}
			if !slices.Contains(c.Members, m) {
				c.Members = append(c.Members, m)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cfg.Members, nil
}

// DropMembers removes members from an elastic group and returns its
// membership. A group with member mappings refuses it (ErrMappingsInUse).
func DropMembers(ctx context.Context, js *jsapi.JS, stream, group string, members ...string) ([]string, error) {
	cfg, err := update(ctx, js, stream, group, func(c *ElasticConfig) error {
		if len(c.MemberMappings) > 0 {
			return ErrMappingsInUse
		}
		c.Members = slices.DeleteFunc(c.Members, func(m string) bool { return slices.Contains(members, m) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cfg.Members, nil
}

// SetMappings replaces an elastic group's membership by explicit member
// mappings (they must map every partition exactly once).
func SetMappings(ctx context.Context, js *jsapi.JS, stream, group string, mappings []MemberMapping) error {
	if len(mappings) == 0 {
		return fmt.Errorf("%w: no member mappings", ErrInvalidConfig)
	}
	_, err := update(ctx, js, stream, group, func(c *ElasticConfig) error {
		c.Members = nil
		c.MemberMappings = mappings
		return nil
	})
	return err
}

// DeleteMappings removes an elastic group's member mappings, leaving it
// with no members.
func DeleteMappings(ctx context.Context, js *jsapi.JS, stream, group string) error {
	_, err := update(ctx, js, stream, group, func(c *ElasticConfig) error {
		c.MemberMappings = nil
		return nil
	})
	return err
}

// ActiveMembers returns the members of a group that are consuming: for a
// static group those whose consumer has waiting pulls, for an elastic one
// those whose consumer exists (it is removed after AckWait without a
// member pulling).
func ActiveMembers(ctx context.Context, js *jsapi.JS, k Kind, stream, group string) ([]string, error) {
	var members []string
	var mappings []MemberMapping
	consStream := stream
	switch k {
	case Static:
		cfg, err := GetStatic(ctx, js, stream, group)
		if err != nil {
			return nil, err
		}
		members, mappings = cfg.Members, cfg.MemberMappings
	case Elastic:
		cfg, err := GetElastic(ctx, js, stream, group)
		if err != nil {
			return nil, err
		}
		members, mappings = cfg.Members, cfg.MemberMappings
		consStream = ElasticStreamName(stream, group)
	default:
		_, err := k.bucket()
		return nil, err
	}
	for _, m := range mappings {
		members = append(members, m.Member)
	}
	var active []string
	for ci, err := range js.Consumers(ctx, consStream) {
		if err != nil {
			return nil, err
		}
		for _, m := range members {
			if k == Static && ci.Name == StaticConsumerName(group, m) && ci.NumWaiting > 0 ||
				k == Elastic && ci.Name == m {
				active = append(active, m)
				break
			}
		}
	}
	slices.Sort(active)
	return slices.Compact(active), nil
}

// StepDown unpins the instance of member now consuming, so that the server
// pins the next instance of the member that pulls (a standby).
func StepDown(ctx context.Context, js *jsapi.JS, k Kind, stream, group, member string) error {
	switch k {
	case Static:
		return js.UnpinConsumer(ctx, stream, StaticConsumerName(group, member), PriorityGroup)
	case Elastic:
		return js.UnpinConsumer(ctx, ElasticStreamName(stream, group), member, PriorityGroup)
	}
	_, err := k.bucket()
	return err
}

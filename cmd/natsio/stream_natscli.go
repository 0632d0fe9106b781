package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
)

// streamNatscli are natscli's stream add/edit flags beyond streamFlags'.
type streamNatscli struct {
	ack                                 bool
	tags                                []string
	cluster                             string
	firstSeq                            uint64
	mirror                              string
	noMirror                            bool
	sources                             []string
	allowBatch, allowFast, allowCounter bool
	allowMirrorDirect, allowSchedules   bool
	transformSrc, transformDest         string
	noTransform                         bool
	repubSrc, repubDest                 string
	repubHeaders, noRepub               bool
	limitInactive                       time.Duration
	limitMaxPending                     int
	persistMode                         string
	add                                 addExtras
	edit                                editExtras
}

// streamNatscliFlags are the configuration flags streamNatscli adds (edit
// needs one of them, or those of streamFlags).
var streamNatscliFlags = []string{"ack", "tag", "tags", "cluster", "mirror", "no-mirror", "source", "allow-batch",
	"allow-fast", "allow-counter", "allow-mirror-direct", "allow-msg-ttl", "allow-schedules", "subject-del-markers-ttl",
	"transform-source", "transform-destination", "no-transform", "republish-source", "republish-destination",
	"republish-headers", "no-republish", "limit-consumer-inactive", "limit-consumer-max-pending"}

func (x *streamNatscli) register(c *cobra.Command, f *streamFlags, edit bool) {
	fl := c.Flags()
	fl.BoolVar(&x.ack, "ack", true, "acknowledge publishes (--ack=false is --no-ack)")
	fl.StringSliceVar(&x.tags, "tag", nil, "place the stream on servers with these tags (repeatable)")
	fl.StringSliceVar(&x.tags, "tags", nil, "the same as --tag")
	_ = fl.MarkHidden("tags")
	fl.StringVar(&x.cluster, "cluster", "", "place the stream in this cluster")
	fl.StringVar(&x.mirror, "mirror", "", "mirror this stream completely")
	fl.StringSliceVar(&x.sources, "source", nil, "copy messages from these streams into this one (repeatable)")
	fl.BoolVar(&x.allowBatch, "allow-batch", false, "allow atomic batch publishing")
	fl.BoolVar(&x.allowFast, "allow-fast", false, "allow fast batch publishing")
	fl.BoolVar(&x.allowCounter, "allow-counter", false, "make the stream a distributed counter")
	fl.BoolVar(&x.allowMirrorDirect, "allow-mirror-direct", false, "let mirrors answer Direct Gets for this stream")
	fl.BoolVar(&f.allowTTL, "allow-msg-ttl", false, "the same as --allow-ttl")
	fl.BoolVar(&x.allowSchedules, "allow-schedules", false, "allow message schedules")
	fl.Var(newDuration(&f.markerTTL, 0), "subject-del-markers-ttl", "the same as --marker-ttl")
	fl.StringVar(&x.transformSrc, "transform-source", "", "subject transform source")
	fl.StringVar(&x.transformDest, "transform-destination", "", "subject transform destination")
	fl.StringVar(&x.repubSrc, "republish-source", "", "republish messages on these subjects to --republish-destination")
	fl.StringVar(&x.repubDest, "republish-destination", "", "where --republish-source messages are republished")
	fl.BoolVar(&x.repubHeaders, "republish-headers", false, "republish headers only, no bodies")
	fl.Var(newDuration(&x.limitInactive, 0), "limit-consumer-inactive", "the longest inactive threshold the stream's consumers may have")
	fl.IntVar(&x.limitMaxPending, "limit-consumer-max-pending", 0, "the most unacknowledged messages the stream's consumers may have")
	if edit {
		fl.BoolVar(&x.noMirror, "no-mirror", false, "remove the mirror configuration")
		fl.BoolVar(&x.noTransform, "no-transform", false, "remove the subject transform")
		fl.BoolVar(&x.noRepub, "no-republish", false, "remove the republish configuration")
		x.edit.register(c, "stream")
	} else {
		fl.Uint64Var(&x.firstSeq, "first-sequence", 0, "the sequence of the stream's first message")
		fl.Var(newEnum(&x.persistMode, "default", "default", "async"), "persist-mode", "default: acknowledge once the write is flushed; async: possibly before")
		x.add.register(c)
	}
	// natscli's short storage names.
	if sf := fl.Lookup("storage"); sf != nil {
		if e, ok := sf.Value.(*enumValue); ok {
			e.allowed = append(e.allowed, "f", "m")
		}
	}
	addNegations(c)
}

// apply writes the flags given (every one when all is set) into cfg.
func (x *streamNatscli) apply(c *cobra.Command, f *streamFlags, cfg *jsapi.StreamConfig, all bool) {
	set := func(name string) bool { return all || changed(c, name) }
	switch cfg.Storage {
	case "f":
		cfg.Storage = jsapi.StorageFile
	case "m":
		cfg.Storage = jsapi.StorageMemory
	}
	if changed(c, "ack") {
		cfg.NoAck = !x.ack
	}
	if changed(c, "tag") || changed(c, "tags") || changed(c, "cluster") {
		p := jsapi.Placement{}
		if cfg.Placement != nil {
			p = *cfg.Placement
		}
		if changed(c, "tag") || changed(c, "tags") {
			p.Tags = x.tags
		}
		if changed(c, "cluster") {
			p.Cluster = x.cluster
		}
		cfg.Placement = &p
	}
	if changed(c, "mirror") {
		cfg.Mirror = &jsapi.StreamSource{Name: x.mirror}
		if all {
			cfg.Subjects = nil // a mirror has no subjects of its own
		}
	}
	if x.noMirror {
		cfg.Mirror = nil
	}
	if changed(c, "source") {
		cfg.Sources = nil
		for _, s := range x.sources {
			cfg.Sources = append(cfg.Sources, jsapi.StreamSource{Name: s})
		}
	}
	if set("allow-batch") {
		cfg.AllowAtomicPublish = x.allowBatch
	}
	if set("allow-fast") {
		cfg.AllowBatchPublish = x.allowFast
	}
	if set("allow-counter") {
		cfg.AllowMsgCounter = x.allowCounter
	}
	if set("allow-mirror-direct") {
		cfg.MirrorDirect = x.allowMirrorDirect
	}
	if set("allow-schedules") {
		cfg.AllowMsgSchedules = x.allowSchedules
	}
	if changed(c, "allow-msg-ttl") {
		cfg.AllowMsgTTL = f.allowTTL
	}
	if changed(c, "subject-del-markers-ttl") {
		cfg.SubjectDeleteMarkerTTL = f.markerTTL
	}
	if changed(c, "transform-source") || changed(c, "transform-destination") {
		t := jsapi.SubjectTransformConfig{}
		if cfg.SubjectTransform != nil {
			t = *cfg.SubjectTransform
		}
		if changed(c, "transform-source") {
			t.Source = x.transformSrc
		}
		if changed(c, "transform-destination") {
			t.Destination = x.transformDest
		}
		cfg.SubjectTransform = &t
	}
	if x.noTransform {
		cfg.SubjectTransform = nil
	}
	if changed(c, "republish-source") || changed(c, "republish-destination") || changed(c, "republish-headers") {
		r := jsapi.RePublish{}
		if cfg.RePublish != nil {
			r = *cfg.RePublish
		}
		if changed(c, "republish-source") {
			r.Source = x.repubSrc
		}
		if changed(c, "republish-destination") {
			r.Destination = x.repubDest
		}
		if changed(c, "republish-headers") {
			r.HeadersOnly = x.repubHeaders
		}
		cfg.RePublish = &r
	}
	if x.noRepub {
		cfg.RePublish = nil
	}
	if changed(c, "limit-consumer-inactive") {
		cfg.ConsumerLimits.InactiveThreshold = x.limitInactive
	}
	if changed(c, "limit-consumer-max-pending") {
		cfg.ConsumerLimits.MaxAckPending = x.limitMaxPending
	}
	if changed(c, "first-sequence") {
		cfg.FirstSeq = x.firstSeq
	}
	if changed(c, "persist-mode") {
		cfg.PersistMode = jsapi.PersistMode(x.persistMode)
	}
}

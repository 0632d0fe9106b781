package objstore

import (
	"github.com/natsio/natsio/internal/fuzzhook"
	"github.com/natsio/natsio/jsapi"
)

func init() {
	fuzzhook.ObjectMeta = func(bucket, name string, data []byte) (string, string, bool, error) {
		s := newStore(nil, bucket, nil)
		m := &jsapi.Msg{}
		m.Subject, m.Data = s.metaSubject(name), data
		listed := s.infoOf(m, watchOpts{}) != nil
		info, err := s.decodeMeta(data, name)
		if err != nil {
			return "", "", listed, err
		}
		subj, err := s.chunkSubject(info.NUID)
		return info.NUID, subj, listed, err
	}
}

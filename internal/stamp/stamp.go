// Package stamp decodes the RFC 3339 time stamps nats-server writes in
// message headers (Nats-Time-Stamp of a direct get or a stored message) at a
// fraction of time.Parse's cost, for paths that decode one per message.
package stamp

import "time"

// Parse decodes s as time.Parse(time.RFC3339Nano, s) does. The server's own
// form, UTC with "Z" and up to nine fraction digits
// ("2026-11-30T03:28:55.193118864Z"), is decoded directly; anything else
// (an offset, a missing or longer fraction, a malformed stamp) goes to
// time.Parse, so the result and the error are always time.Parse's.
func Parse(s string) (time.Time, error) {
	if t, ok := parseUTC(s); ok {
		return t, nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

// parseUTC decodes "YYYY-MM-DDTHH:MM:SS[.f{1,9}]Z" with every field in
// range, or reports false.
func parseUTC(s string) (time.Time, bool) {
	if len(s) < 20 || len(s) > 30 || s[len(s)-1] != 'Z' ||
		s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	year, ok1 := digits(s[0:4])
	month, ok2 := digits(s[5:7])
	day, ok3 := digits(s[8:10])
	hour, ok4 := digits(s[11:13])
	minute, ok5 := digits(s[14:16])
	sec, ok6 := digits(s[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) ||
		month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	nsec := 0
	if frac := s[19 : len(s)-1]; len(frac) > 0 {
		// "." and 1 to 9 digits, scaled to nanoseconds.
		if frac[0] != '.' || len(frac) < 2 {
			return time.Time{}, false
		}
		v, ok := digits(frac[1:])
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(frac) {
			v *= 10
		}
		nsec = v
	} else if len(s) != 20 {
		return time.Time{}, false
	}
	days := daysFromCivil(year, month, day)
	secs := days*86400 + int64(hour*3600+minute*60+sec)
	return time.Unix(secs, int64(nsec)).UTC(), true
}

// digits decodes a run of ASCII digits (at most 9).
func digits(s string) (int, bool) {
	v := 0
	for i := 0; i < len(s); i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int(d)
	}
	return v, len(s) > 0
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil counts days from 1970-01-01 to the given proleptic
// Gregorian date (eras of 400 years, March-based years).
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 { // y is -1 for January and February of year 0: round down
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

package awsevent

import "strings"

// pathNames are the members of AWS's envelope whose CloudEvents counterparts have other names: AWS's name first.
var pathNames = [][2]string{{"detail-type", "type"}, {"detail", "data"}}

// RewritePath is a JSON path written over AWS's event envelope ($.detail.orderId, $.detail-type) as a path over
// the CloudEvents JSON form ($.data.orderId, $.type): the members named differently are renamed where they begin
// the path; every other path (one of source, id, time, account, region, resources, or anything after "$[" ) is
// returned as it is.
func RewritePath(p string) string { return renameFirst(p, 0, 1) }

// PathForAWS is RewritePath the other way round: a path over the CloudEvents form as AWS's clients write it.
func PathForAWS(p string) string { return renameFirst(p, 1, 0) }

func renameFirst(p string, from, to int) string {
	for _, n := range pathNames {
		head := "$." + n[from]
		rest, ok := strings.CutPrefix(p, head)
		if ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			return "$." + n[to] + rest
		}
	}
	return p
}

package aws

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/eventbridge-go/eventbridge/domain/account"
	"github.com/eventbridge-go/eventbridge/domain/awsevent"
	"github.com/eventbridge-go/eventbridge/web"
)

// DefaultBus is the bus of the requests that name none, as in AWS.
const DefaultBus = awsevent.DefaultBus

// OwnService is the service of the ARNs of this product's own target types (ARNs
// `arn:aws:eventbridge-go:<region>:<account>:http/<url>` and `...:log`), which pass the ARN validation of
// Terraform's aws provider.
const OwnService = "eventbridge-go"

// arn is an Amazon Resource Name: arn:<partition>:<service>:<region>:<account>:<resource>.
type arn struct {
	service, region, account, resource string
}

// parseARN reads an ARN of the aws partition; ok is false for anything else.
func parseARN(s string) (arn, bool) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] != "aws" || parts[2] == "" {
		return arn{}, false
	}
	return arn{service: parts[2], region: parts[3], account: parts[4], resource: parts[5]}, true
}

func (n arn) String() string {
	return "arn:aws:" + n.service + ":" + n.region + ":" + n.account + ":" + n.resource
}

// accountNumber is the 12-digit AWS account id of the request's account.
func accountNumber(c *gin.Context) string { return account.AWSAccountID(web.AccountOf(c)) }

// arnOf is the ARN of an EventBridge resource of the request's account.
func (a *api) arnOf(c *gin.Context, resource string) string {
	return arn{service: Service, region: a.region, account: accountNumber(c), resource: resource}.String()
}

// busARN is the ARN of a bus of the request's account.
func (a *api) busARN(c *gin.Context, bus string) string {
	return awsevent.BusARN(a.region, accountNumber(c), bus)
}

// ruleARN is the ARN of a rule of the request's account.
func (a *api) ruleARN(c *gin.Context, bus, rule string) string {
	return awsevent.RuleARN(a.region, accountNumber(c), bus, rule)
}

// busName resolves what a request gives for a bus — a name, an ARN of one of the account's buses, or nothing (the
// default bus) — to its name. An ARN of another account or region, or of something else, is answered as a bus
// that does not exist, naming what was given.
func (a *api) busName(c *gin.Context, field, v string) (string, error) {
	if v == "" {
		return DefaultBus, nil
	}
	if !strings.HasPrefix(v, "arn:") {
		return v, nil
	}
	n, ok := parseARN(v)
	name, isBus := strings.CutPrefix(n.resource, "event-bus/")
	switch {
	case !ok || n.service != Service || !isBus || name == "":
		return "", validation("Parameter %s is not valid. Reason: %q is not the name or ARN of an event bus "+
			"(arn:aws:events:<region>:<account>:event-bus/<name>).", field, v)
	case n.region != a.region || n.account != accountNumber(c):
		return "", &Error{Type: excNotFound, Message: "Event bus " + v + " does not exist."}
	}
	return name, nil
}

// targetARN is the ARN a target of the given type answers with: an API destination's or a bus's ARN, or one of
// this product's own (OwnService): http/<url>, log, plugin/<type>.
func (a *api) ownARN(c *gin.Context, resource string) string {
	return arn{service: OwnService, region: a.region, account: accountNumber(c), resource: resource}.String()
}

// validURL reports whether s is an absolute http or https URL (the http target checks the rest).
func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// regionRe is the form of AWS's region names: us-east-1, eu-central-2, us-gov-west-1, cn-northwest-1, ...
var regionRe = regexp.MustCompile(`^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-[0-9]{1,2}$`)

// ValidateRegion checks that region has the form of AWS's region names (us-east-1), which the SDKs and
// Terraform's provider accept.
func ValidateRegion(region string) error {
	if !regionRe.MatchString(region) {
		return fmt.Errorf("%q is not a region name such as us-east-1 or eu-central-1", region)
	}
	return nil
}

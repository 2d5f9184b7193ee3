package aws_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/eventbridge-go/eventbridge/web/aws"
)

// TestValidateRegion: the names of AWS's regions pass, other forms do not.
func TestValidateRegion(t *testing.T) {
	t.Parallel()
	for _, r := range []string{"us-east-1", "eu-central-2", "ap-southeast-4", "us-gov-west-1", "cn-northwest-1", "il-central-1", "us-isob-east-1"} {
		assert.NoError(t, aws.ValidateRegion(r), r)
	}
	for _, r := range []string{"", "us-east", "US-EAST-1", "useast1", "us east 1", "us-east-123", "local"} {
		assert.Error(t, aws.ValidateRegion(r), r)
	}
}

package gateway

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/cozystack/function-tenant-gateway/fn/kube"
)

// validateName checks the TenantGateway's name, which every composed object
// carries as a label value (see Names in docs/design.md): the API server
// admits an XR name of up to 253 characters, a label value of 63.
func validateName(name string) field.ErrorList {
	if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
			fmt.Sprintf("every composed object carries the name as the value of label %s: %s", kube.LabelTenantGateway, strings.Join(errs, "; ")))}
	}
	return nil
}

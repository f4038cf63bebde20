from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("judging.api.urls")),
    path("", include("judging.web.urls")),
]

# Under /api/ a URL that matches nothing and a server error answer in the API's one error shape.
handler404 = "judging.api.errors.not_found"
handler500 = "judging.api.errors.server_error"
